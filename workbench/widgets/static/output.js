// The live output pane of a workbench card. Tool output is untrusted: it only ever reaches the
// page through textContent, never innerHTML.
const STREAMS = new Set(["stdout", "stderr", "log"]);

function render({ model, el }) {
  el.classList.add("wb-output-pane");
  const note = document.createElement("div");
  note.className = "wb-output-note";
  const pre = document.createElement("pre");
  pre.className = "wb-output";
  el.append(note, pre);

  function draw() {
    // Follow the newest line unless the person scrolled up to read.
    const following = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 16;
    const runs = (model.get("segments") || []).map(([stream, text]) => {
      const span = document.createElement("span");
      span.className = `wb-${STREAMS.has(stream) ? stream : "other"}`;
      span.textContent = text;
      return span;
    });
    pre.replaceChildren(...runs);
    const text = model.get("note") || "";
    note.textContent = text;
    note.hidden = text === "";
    if (following) pre.scrollTop = pre.scrollHeight;
  }

  model.on("change:segments", draw);
  model.on("change:note", draw);
  draw();
  return () => {
    model.off("change:segments", draw);
    model.off("change:note", draw);
  };
}

export default { render };
