// The listing tree of a workbench card. Entry names and paths come from a tool, so they only
// ever reach the page through textContent and title, never innerHTML.
function render({ model, el }) {
  el.classList.add("wb-tree");

  function setExpanded(path, open) {
    const now = (model.get("expanded") || []).filter((p) => p !== path);
    model.set("expanded", open ? [...now, path] : now);
    model.save_changes();
  }

  function row(entry, children, expanded, loading, clickable, ancestors) {
    const li = document.createElement("li");
    const line = document.createElement("div");
    const kind = ["directory", "file", "symlink"].includes(entry.type) ? entry.type : "other";
    line.className = `wb-tree-row wb-tree-${kind}`;
    const isDir = kind === "directory";
    const loaded = Object.prototype.hasOwnProperty.call(children, entry.path);
    // A listing that contains its own ancestor (a symlink loop) is drawn once, not forever.
    const open = loaded && expanded.has(entry.path) && !ancestors.has(entry.path);

    const twisty = document.createElement(isDir ? "button" : "span");
    twisty.className = "wb-twisty";
    twisty.textContent = isDir ? (open ? "▾" : "▸") : "";
    if (isDir) {
      twisty.title = loaded ? (open ? "collapse" : "expand") : "open";
      twisty.addEventListener("click", () => {
        if (loaded) setExpanded(entry.path, !open);
        else if (clickable) model.send({ open: entry.path });
      });
    }

    const name = document.createElement(clickable ? "button" : "span");
    name.className = "wb-tree-name";
    name.textContent = isDir ? `${entry.name}/` : entry.name;
    name.title = entry.path;
    if (clickable) {
      name.addEventListener("click", () => model.send({ open: entry.path }));
    }
    if (loading.has(entry.path)) line.classList.add("wb-tree-loading");
    line.append(twisty, name);
    li.append(line);
    if (open) {
      const below = new Set(ancestors).add(entry.path);
      li.append(list(children[entry.path], children, expanded, loading, clickable, below));
    }
    return li;
  }

  function list(entries, children, expanded, loading, clickable, ancestors) {
    const ul = document.createElement("ul");
    for (const entry of entries || []) {
      ul.append(row(entry, children, expanded, loading, clickable, ancestors));
    }
    return ul;
  }

  function draw() {
    const children = model.get("children") || {};
    const expanded = new Set(model.get("expanded") || []);
    const loading = new Set(model.get("loading") || []);
    const clickable = Boolean(model.get("clickable"));
    const entries = model.get("entries");
    el.replaceChildren(list(entries, children, expanded, loading, clickable, new Set()));
  }

  const events = ["entries", "children", "expanded", "loading", "clickable"].map((n) => `change:${n}`);
  for (const event of events) model.on(event, draw);
  draw();
  return () => {
    for (const event of events) model.off(event, draw);
  };
}

export default { render };
