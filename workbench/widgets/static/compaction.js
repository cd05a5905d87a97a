// The compaction board's browser view: totals, one row per call, and the selected call's
// receipts before and after. All text is set with textContent: receipts are tool output.

function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

function number(value) {
  return Number(value).toLocaleString("en-US");
}

function totals(data) {
  const box = node("div", "wb-compaction-totals");
  if (!data || data.items === undefined) return box;
  const line = node("div", "wb-compaction-line");
  line.append(
    node("b", "", `${number(data.before)} → ${number(data.after)} ${data.unit}`),
    ` for ${data.items} calls, budget ${number(data.budget)} `,
    node(
      "span",
      `wb-badge ${data.over_budget ? "wb-over-budget" : "wb-within-budget"}`,
      data.over_budget ? "over budget" : "within budget",
    ),
  );
  const bar = node("div", "wb-compaction-bar");
  const scale = Math.max(data.before, data.budget, 1);
  const fill = node("div", "wb-compaction-bar-after");
  fill.style.width = `${(100 * data.after) / scale}%`;
  const mark = node("div", "wb-compaction-bar-budget");
  mark.style.left = `${(100 * Math.min(data.budget, scale)) / scale}%`;
  bar.append(fill, mark);
  box.append(line, bar);
  if (data.rules.length) {
    const rules = node("div", "wb-compaction-rules");
    for (const [rule, count, saved] of data.rules) {
      rules.append(node("span", "wb-badge", `${rule} ×${count} (−${number(saved)})`), " ");
    }
    box.append(rules);
  }
  return box;
}

function table(model) {
  const rows = model.get("rows");
  const selected = model.get("selected");
  const element = node("table", "wb-table wb-compaction-table");
  const head = node("tr");
  for (const name of model.get("columns")) head.append(node("th", "", name));
  element.append(node("thead"));
  element.tHead.append(head);
  const body = node("tbody");
  for (const row of rows) {
    const line = node("tr", "wb-compaction-row");
    if (row.changed) line.classList.add("wb-changed");
    if (row.recent) line.classList.add("wb-recent");
    if (row.index === selected) line.classList.add("wb-selected");
    line.dataset.index = String(row.index);
    line.tabIndex = 0;
    for (const cell of row.cells) line.append(node("td", "", cell));
    const choose = () => {
      model.set("selected", row.index);
      model.save_changes();
    };
    line.addEventListener("click", choose);
    line.addEventListener("keydown", (event) => {
      if (event.key === "Enter") choose();
    });
    body.append(line);
  }
  element.append(body);
  return element;
}

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

function detail(data) {
  const box = node("div", "wb-compaction-detail");
  if (!data || !data.panes) return box;
  const title = node("div", "wb-compaction-detail-title");
  title.append(node("b", "", data.title), " ", data.rules.length ? data.rules.join(", ") : "unchanged");
  const panes = node("div", "wb-inspector-panes wb-compaction-panes");
  panes.append(...data.panes.map(pane));
  box.append(title, panes);
  return box;
}

function draw(model, root) {
  const parts = [totals(model.get("totals"))];
  if (model.get("rows").length) {
    const scroll = node("div", "wb-compaction-scroll");
    scroll.append(table(model));
    parts.push(scroll);
  }
  parts.push(detail(model.get("detail")));
  root.replaceChildren(...parts);
}

export default {
  render({ model, el }) {
    const root = node("div", "wb-compaction-root");
    el.append(root);
    const redraw = () => draw(model, root);
    const events = ["change:totals", "change:rows", "change:selected", "change:detail"];
    for (const event of events) model.on(event, redraw);
    redraw();
    return () => {
      for (const event of events) model.off(event, redraw);
    };
  },
};
