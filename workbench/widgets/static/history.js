// The history table's browser view. Cells are set with textContent only: summaries and tool
// names come from tools and are untrusted. Clicking a row (or Enter on it) selects its call.

function draw(model, root) {
  const selected = model.get("selected");
  const rows = model.get("rows");
  const parts = [node("div", "wb-history-note", model.get("note"))];
  if (rows.length) {
    const table = headedTable("wb-table wb-history-table", model.get("columns"));
    const body = node("tbody");
    for (const row of rows) {
      const kind = `wb-history-row wb-status-${row.status}`;
      const line = choosableRow(model, kind, row.cells, "selected", row.call_id);
      if (row.call_id === selected) line.classList.add("wb-selected");
      if (row.pinned) line.classList.add("wb-history-pinned");
      line.dataset.callId = row.call_id;
      body.append(line);
    }
    table.append(body);
    parts.push(table);
  }
  root.replaceChildren(...parts);
}

const EVENTS = ["change:rows", "change:selected", "change:note", "change:columns"];
export default redrawnView("wb-history-table-root", EVENTS, draw);
