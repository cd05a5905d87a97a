// The compaction board's browser view: totals, one row per call, and the selected call's
// receipts before and after. All text is set with textContent: receipts are tool output.

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
  const selected = model.get("selected");
  const lines = model.get("rows").map((row) => {
    const line = choosableRow(model, "wb-compaction-row", row.cells, "selected", row.index);
    if (row.changed) line.classList.add("wb-changed");
    if (row.recent) line.classList.add("wb-recent");
    if (row.index === selected) line.classList.add("wb-selected");
    line.dataset.index = String(row.index);
    return line;
  });
  return rowsTable("wb-compaction-table", model.get("columns"), lines);
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
  if (model.get("rows").length) parts.push(table(model));
  parts.push(detail(model.get("detail")));
  root.replaceChildren(...parts);
}

const EVENTS = ["change:totals", "change:rows", "change:selected", "change:detail"];
export default redrawnView("wb-compaction-root", EVENTS, draw);
