// The envelope inspector's browser view. Every piece of text is set with textContent (or as a
// text node), never as HTML: the panes hold tool output, which is untrusted.

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

function draw(model, root) {
  const panes = node("div", "wb-inspector-panes");
  panes.append(...model.get("panes").map(pane));
  const parts = [header(model.get("header"))];
  const note = model.get("note");
  if (note) parts.push(node("div", "wb-inspector-note", note));
  parts.push(panes);
  root.replaceChildren(...parts);
}

const EVENTS = ["change:panes", "change:header", "change:note"];
export default redrawnView("wb-inspector-root", EVENTS, draw);
