// The envelope inspector's browser view. Every piece of text is set with textContent (or as a
// text node), never as HTML: the panes hold tool output, which is untrusted.

function node(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

function header(info) {
  const head = node("div", "wb-inspector-header");
  if (!info || !info.tool_name) return head;
  head.append(node("b", "", info.tool_name), " ");
  head.append(node("span", `wb-badge wb-status-${info.status}`, info.status), " ");
  if (info.kind) head.append(node("span", "wb-badge wb-kind", info.kind), " ");
  if (info.call_id) head.append(node("code", "", info.call_id), " ");
  head.append(node("span", "wb-inspector-summary", info.summary_text || ""));
  return head;
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

function draw(model, root) {
  const panes = node("div", "wb-inspector-panes");
  panes.append(...model.get("panes").map(pane));
  const parts = [header(model.get("header"))];
  const note = model.get("note");
  if (note) parts.push(node("div", "wb-inspector-note", note));
  parts.push(panes);
  root.replaceChildren(...parts);
}

export default {
  render({ model, el }) {
    const root = node("div", "wb-inspector-root");
    el.append(root);
    const redraw = () => draw(model, root);
    const events = ["change:panes", "change:header", "change:note"];
    for (const event of events) model.on(event, redraw);
    redraw();
    return () => {
      for (const event of events) model.off(event, redraw);
    };
  },
};
