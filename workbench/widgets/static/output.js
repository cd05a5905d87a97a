// The live output pane of a workbench card. Tool output is untrusted: it only ever reaches the
// page through textContent, never innerHTML. ANSI colour codes (SGR) become wb-ansi-* classes,
// by the rules of _ansi.py; every other escape sequence is dropped.
const STREAMS = new Set(["stdout", "stderr", "log"]);
const ESCAPE = /\x1b(?:\[([0-9;?]*)([A-Za-z])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)/g;
const FLAGS = { 1: "bold", 2: "dim", 3: "italic", 4: "underline" };
const UNSET = { 22: ["bold", "dim"], 23: ["italic"], 24: ["underline"] };
// Where each pane was scrolled, by model, so a redrawn view (the card republished when its
// call ends) keeps the place rather than jumping back to the first line.
const places = new WeakMap();

function applySgr(style, params) {
  const codes = params ? params.split(";").map((part) => parseInt(part, 10) || 0) : [0];
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i];
    if (code === 0) { style.flags.clear(); style.fg = null; style.bg = null; }
    else if (FLAGS[code]) style.flags.add(FLAGS[code]);
    else if (UNSET[code]) UNSET[code].forEach((flag) => style.flags.delete(flag));
    else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) style.fg = code % 10;
    else if ((code >= 40 && code <= 47) || (code >= 100 && code <= 107)) style.bg = code % 10;
    else if (code === 39) style.fg = null;
    else if (code === 49) style.bg = null;
    else if ((code === 38 || code === 48) && i + 1 < codes.length) {
      const mode = codes[i + 1];
      if (mode === 5 && i + 2 < codes.length) {
        if (codes[i + 2] < 16) style[code === 38 ? "fg" : "bg"] = codes[i + 2] % 8;
        i += 2;
      } else if (mode === 2) i += 4;
      else i += 1;
    }
  }
}

function classesOf(style) {
  const names = [...style.flags].sort().map((flag) => `wb-ansi-${flag}`);
  if (style.fg !== null) names.push(`wb-ansi-fg-${style.fg}`);
  if (style.bg !== null) names.push(`wb-ansi-bg-${style.bg}`);
  return names.join(" ");
}

function ansiSpans(text) {
  if (!text.includes("\x1b")) return [document.createTextNode(text)];
  const style = { flags: new Set(), fg: null, bg: null };
  const nodes = [];
  let at = 0;
  const push = (piece) => {
    if (!piece) return;
    const classes = classesOf(style);
    if (!classes) { nodes.push(document.createTextNode(piece)); return; }
    const span = document.createElement("span");
    span.className = classes;
    span.textContent = piece;
    nodes.push(span);
  };
  for (const match of text.matchAll(ESCAPE)) {
    push(text.slice(at, match.index));
    if (match[2] === "m") applySgr(style, match[1] || "");
    at = match.index + match[0].length;
  }
  push(text.slice(at));
  return nodes;
}

function render({ model, el }) {
  el.classList.add("wb-output-pane");
  const note = document.createElement("div");
  note.className = "wb-output-note";
  const pre = document.createElement("pre");
  pre.className = "wb-output";
  el.append(note, pre);

  function draw() {
    // Follow the newest line unless the person scrolled up to read.
    const place = places.get(model);
    const following = pre.isConnected
      ? pre.scrollHeight - pre.scrollTop - pre.clientHeight < 16
      : !place || place.following;
    const runs = (model.get("segments") || []).map(([stream, text]) => {
      const span = document.createElement("span");
      span.className = `wb-${STREAMS.has(stream) ? stream : "other"}`;
      span.append(...ansiSpans(text));
      return span;
    });
    pre.replaceChildren(...runs);
    const text = model.get("note") || "";
    note.textContent = text;
    note.hidden = text === "";
    if (following) pre.scrollTop = pre.scrollHeight;
  }

  function remember() {
    places.set(model, {
      following: pre.scrollHeight - pre.scrollTop - pre.clientHeight < 16,
      top: pre.scrollTop,
    });
  }

  // A new view is not in the page yet: restore the place once it is laid out.
  function restore() {
    if (!pre.isConnected || pre.clientHeight === 0) {
      // A pane that stays hidden (no output yet) stops trying after about ten seconds.
      if (!restored.cancelled && restored.tries++ < 600) {
        restored.frame = requestAnimationFrame(restore);
      }
      return;
    }
    const place = places.get(model);
    pre.scrollTop = !place || place.following ? pre.scrollHeight : place.top;
  }
  const restored = { frame: 0, cancelled: false, tries: 0 };

  model.on("change:segments", draw);
  model.on("change:note", draw);
  pre.addEventListener("scroll", remember);
  draw();
  restore();
  return () => {
    restored.cancelled = true;
    cancelAnimationFrame(restored.frame);
    model.off("change:segments", draw);
    model.off("change:note", draw);
  };
}

export default { render };
