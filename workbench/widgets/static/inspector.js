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
  const clients = model.get("clients");
  if (clients.length) {
    const seen = node("div", "wb-inspector-clients");
    const sides = node("div", "wb-inspector-panes");
    sides.append(...clients.map(pane));
    seen.append(
      node("h4", "", "As each client sees it"),
      node("div", "wb-inspector-clients-note", model.get("clients_note")),
      sides,
    );
    parts.push(seen);
  }
  root.replaceChildren(...parts);
}

const EVENTS = ["change:panes", "change:header", "change:note", "change:clients", "change:clients_note"];
export default redrawnView("wb-inspector-root", EVENTS, draw);
