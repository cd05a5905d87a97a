// The history table's browser view. Cells are set with textContent only: summaries and tool
// names come from tools and are untrusted. Clicking a row (or Enter on it) selects its call.

function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

function draw(model, root) {
  const selected = model.get("selected");
  const rows = model.get("rows");
  const parts = [node("div", "wb-history-note", model.get("note"))];
  if (rows.length) {
    const table = node("table", "wb-table wb-history-table");
    const headings = node("tr");
    for (const name of model.get("columns")) headings.append(node("th", "", name));
    table.append(node("thead"));
    table.tHead.append(headings);
    const body = node("tbody");
    for (const row of rows) {
      const line = node("tr", `wb-history-row wb-status-${row.status}`);
      if (row.call_id === selected) line.classList.add("wb-selected");
      if (row.pinned) line.classList.add("wb-history-pinned");
      line.dataset.callId = row.call_id;
      line.tabIndex = 0;
      for (const cell of row.cells) line.append(node("td", "", cell));
      const choose = () => {
        model.set("selected", row.call_id);
        model.save_changes();
      };
      line.addEventListener("click", choose);
      line.addEventListener("keydown", (event) => {
        if (event.key === "Enter") choose();
      });
      body.append(line);
    }
    table.append(body);
    parts.push(table);
  }
  root.replaceChildren(...parts);
}

export default {
  render({ model, el }) {
    const root = node("div", "wb-history-table-root");
    el.append(root);
    const redraw = () => draw(model, root);
    const events = ["change:rows", "change:selected", "change:note", "change:columns"];
    for (const event of events) model.on(event, redraw);
    redraw();
    return () => {
      for (const event of events) model.off(event, redraw);
    };
  },
};
