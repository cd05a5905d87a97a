// What the browser views share; each view's module is this file followed by its own code.
// All text is set with textContent (or as text nodes), never as HTML: it comes from tools.

function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

// A table whose head names `columns`.
function headedTable(className, columns) {
  const table = node("table", className);
  const head = node("tr");
  for (const name of columns) head.append(node("th", "", name));
  table.append(node("thead"));
  table.tHead.append(head);
  return table;
}

// A table of `lines` (rows) headed by `columns`, in a box that scrolls past its height: the
// `wb-rows` look of table.css, which the saved form (rows_table_html) shares.
function rowsTable(className, columns, lines) {
  const table = headedTable(`wb-table wb-rows ${className}`, columns);
  const body = node("tbody");
  body.append(...lines);
  table.append(body);
  const scroll = node("div", "wb-rows-scroll");
  scroll.append(table);
  return scroll;
}

// A table row the person can choose (a click, or Enter on it): it sets `key` to `value`.
function choosableRow(model, className, cells, key, value) {
  const line = node("tr", className);
  line.tabIndex = 0;
  for (const cell of cells) line.append(node("td", "", cell));
  const choose = () => {
    model.set(key, value);
    model.save_changes();
  };
  line.addEventListener("click", choose);
  line.addEventListener("keydown", (event) => {
    if (event.key === "Enter") choose();
  });
  return line;
}

// One labelled pane of marked text: a title, a count, and segments [text, mark kind or ""].
function pane(data) {
  const section = node("section", `wb-inspector-pane wb-pane-${data.key}`);
  const title = node("header", "wb-pane-title");
  title.append(node("span", "wb-pane-name", data.title), node("span", "wb-pane-count", data.label));
  const text = node("pre", "wb-pane-text");
  for (const [piece, kind] of data.segments) {
    text.append(kind ? node("mark", `wb-mark wb-mark-${kind}`, piece) : document.createTextNode(piece));
  }
  section.append(title, text);
  return section;
}

// The anywidget view of a model drawn whole by `draw(model, root)` whenever `events` fire.
function redrawnView(className, events, draw) {
  return {
    render({ model, el }) {
      const root = node("div", className);
      el.append(root);
      const redraw = () => draw(model, root);
      for (const event of events) model.on(event, redraw);
      redraw();
      return () => {
        for (const event of events) model.off(event, redraw);
      };
    },
  };
}
