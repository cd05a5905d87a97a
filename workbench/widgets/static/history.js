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
}

const EVENTS = ["change:rows", "change:selected", "change:note", "change:columns"];
export default redrawnView("wb-history-table-root", EVENTS, draw);
