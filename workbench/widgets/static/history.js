// The history table's browser view. Cells are set with textContent only: summaries and tool
// names come from tools and are untrusted. Clicking a row (or Enter on it) selects its call.

function draw(model, root) {
  const selected = model.get("selected");
  const rows = model.get("rows");
  const parts = [node("div", "wb-history-note", model.get("note"))];
  if (rows.length) {
    const lines = rows.map((row) => {
      const kind = `wb-history-row wb-status-${row.status}`;
      const line = choosableRow(model, kind, row.cells, "selected", row.call_id);
      if (row.call_id === selected) line.classList.add("wb-selected");
      if (row.pinned) line.classList.add("wb-history-pinned");
      line.dataset.callId = row.call_id;
      return line;
    });
    parts.push(rowsTable("wb-history-table", model.get("columns"), lines));
  }
  root.replaceChildren(...parts);
  keepInView(root.querySelector(".wb-rows-scroll"), root.querySelector("tr.wb-selected"));
}

// An opened call's table is short (history.css): its selected row is scrolled to within it,
// a third of the way down, never the page around it.
function keepInView(scroll, line) {
  if (!scroll || !line) return;
  requestAnimationFrame(() => {
    const offset = line.getBoundingClientRect().top - scroll.getBoundingClientRect().top;
    scroll.scrollTop = Math.max(0, scroll.scrollTop + offset - scroll.clientHeight / 3);
  });
}

const EVENTS = ["change:rows", "change:selected", "change:note", "change:columns"];
export default redrawnView("wb-history-table-root", EVENTS, draw);
