/* promptspec variant explorer.
 *
 * One page for the whole matrix: <select>s pick a variant and this script
 * shows its assembled prompt from explorer-data.json (format described in
 * promptspec/explorer.py, whose `decode` is the reference for `variantOf`).
 * Plain JavaScript, no dependencies, no build step, no network beyond the
 * data file.  Spec text is data: it only ever reaches the page through
 * textContent, never innerHTML.
 */
(function () {
  "use strict";

  var FORMAT = "promptspec-explorer/1";
  var pending = {};

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fmt(n) {
    return n === null || n === undefined ? "?" : Number(n).toLocaleString("en-US");
  }

  function plural(n, word) {
    return fmt(n) + " " + word + (n === 1 ? "" : "s");
  }

  // -- loading ---------------------------------------------------------------

  function loadScript(url) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = url;
      script.onload = function () {
        if (window.PROMPTSPEC_EXPLORER_DATA) resolve(window.PROMPTSPEC_EXPLORER_DATA);
        else reject(new Error(url + " did not define the explorer data"));
      };
      script.onerror = function () { reject(new Error("cannot load " + url)); };
      document.head.appendChild(script);
    });
  }

  function loadData(root) {
    var src = root.getAttribute("data-src");
    var scriptSrc = root.getAttribute("data-src-js");
    // Browsers refuse fetch() for file:// pages; the standalone folder ships
    // the same data as a script for that case.
    var viaScript = scriptSrc && window.location.protocol === "file:";
    var url = new URL(viaScript ? scriptSrc : src, document.baseURI).href;
    if (!pending[url]) {
      pending[url] = viaScript ? loadScript(url) : fetch(url, { credentials: "same-origin" }).then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status + " for " + src);
        return response.json();
      });
    }
    return pending[url];
  }

  // -- reading the data (mirrors explorer.decode) ------------------------------

  function Data(raw) {
    if (!raw || raw.format !== FORMAT) throw new Error("unsupported explorer data (expected " + FORMAT + ")");
    this.raw = raw;
    this.texts = unpackTexts(raw.texts);
    this.axes = raw.axes;
    this.sizes = raw.axes.map(function (axis) { return axis[1].length; });
  }

  // A stored text is a string, or [earlier id, prefix, suffix, middle]:
  // the earlier text's first `prefix` and last `suffix` characters around
  // `middle` (explorer.unpack_texts).
  function unpackTexts(packed) {
    var out = [];
    packed.forEach(function (item) {
      if (typeof item === "string") { out.push(item); return; }
      var other = out[item[0]], prefix = item[1], suffix = item[2];
      out.push(other.slice(0, prefix) + item[3] + (suffix ? other.slice(other.length - suffix) : ""));
    });
    return out;
  }

  Data.prototype.flat = function (idx) {
    var k = 0;
    for (var i = 0; i < idx.length; i++) k = k * this.sizes[i] + idx[i];
    return k;
  };

  Data.prototype.present = function (flat) {
    var runs = this.raw.present, lo = 0, hi = runs.length / 2;
    while (lo < hi) {
      var mid = (lo + hi) >> 1, start = runs[2 * mid], length = runs[2 * mid + 1];
      if (flat < start) hi = mid;
      else if (flat >= start + length) lo = mid + 1;
      else return true;
    }
    return false;
  };

  Data.prototype.lookup = function (column, idx) {
    var deps = column[0], table = column[1], k = 0;
    for (var i = 0; i < deps.length; i++) k = k * this.sizes[deps[i]] + idx[deps[i]];
    var value = Array.isArray(table) ? table[k] : table[String(k)];
    return value === undefined || value === null ? -1 : value;
  };

  Data.prototype.variantOf = function (idx) {
    var raw = this.raw, self = this;
    if (!this.present(this.flat(idx))) return null;
    var cols = raw.columns, texts = this.texts, strings = raw.strings;
    var model = raw.models[idx[0]];
    var tokens = raw.tokens[model[0]];
    var b = raw.bases[this.lookup(cols.base, idx)];
    var base = { text: texts[b[0]], rule: strings[b[1]], detail: strings[b[2]], source: strings[b[3]], tokens: tokens[b[0]] };
    var total = base.tokens;
    var messages = raw.skeletons[this.lookup(cols.skeleton, idx)].map(function (entry) {
      var sections = entry.slice(1).map(function (f) {
        var s = raw.sections[self.lookup(cols.sections[f], idx)];
        var frag = raw.fragments[f];
        var text = texts[s[0]];
        return {
          fragment: frag[0], slot: frag[1], source: frag[2], description: frag[3],
          text: text, startLen: s[1], endLen: s[2], tokens: tokens[s[0]]
        };
      });
      var sum = sections.reduce(function (acc, s) { return acc + s.tokens; }, 0);
      total += sum;
      return { role: raw.roles[entry[0]], sections: sections, tokens: sum };
    });
    // Tools: the list as serialised in the request, counted offline as one part.
    var tools = { placement: "field", tokens: 0, tools: [], deferred: [] };
    if (cols.tools) {
      var set = raw.toolsets[this.lookup(cols.tools, idx)];
      tools = {
        placement: set[0],
        tokens: set[2][model[0]] || 0,
        tools: set[1].map(function (i) {
          var t = raw.tools[i];
          return { tool: t[0], name: t[1], kind: t[2], source: t[3], json: texts[t[4]], tokens: tokens[t[4]] };
        }),
        deferred: set[3].map(function (i) { return raw.tools[i][1]; })
      };
      total += tools.tokens;
    }
    var values = idx.map(function (i, a) { return self.axes[a][1][i]; });
    return {
      id: values.join("/"),
      values: values,
      encoding: raw.encodings[model[0]],
      model: { displayName: model[1], contextWindow: model[2], usableWindow: model[3], compactLimit: model[4] },
      base: base,
      messages: messages,
      tools: tools,
      notes: raw.notes[this.lookup(cols.notes, idx)],
      total: total
    };
  };

  function utf8Length(text) {
    return new TextEncoder().encode(text).length;
  }

  // -- rendering --------------------------------------------------------------

  function picker(root, data) {
    var form = root.querySelector(".pse-picker");
    if (!form) {
      form = el("form", "pse-picker");
      root.insertBefore(form, root.firstChild);
    }
    var selects = [];
    data.axes.forEach(function (axis) {
      var name = axis[0], values = axis[1];
      var select = form.querySelector('select[data-axis="' + CSS.escape(name) + '"]');
      var matches = select && select.options.length === values.length &&
        values.every(function (v, i) { return select.options[i].value === v; });
      if (!matches) {
        if (select) {
          var stale = select.closest("label") || select;
          stale.parentNode.removeChild(stale);
        }
        var label = el("label", "pse-axis");
        label.appendChild(el("span", null, name));
        label.appendChild(document.createTextNode(" "));
        select = el("select");
        select.setAttribute("data-axis", name);
        values.forEach(function (v) {
          var option = el("option", null, v);
          option.value = v;
          select.appendChild(option);
        });
        label.appendChild(select);
        form.appendChild(label);
      }
      selects.push(select);
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    return selects;
  }

  function details(className, summaryParts, text, attrs) {
    var box = el("details", "pse-block " + className);
    Object.keys(attrs || {}).forEach(function (k) { box.setAttribute(k, attrs[k]); });
    var summary = el("summary");
    summaryParts.forEach(function (part) {
      if (typeof part === "string") summary.appendChild(document.createTextNode(part));
      else summary.appendChild(part);
    });
    box.appendChild(summary);
    var pre = el("pre", "pse-text");
    pre.textContent = text;
    box.appendChild(pre);
    return box;
  }

  function render(view, v) {
    while (view.firstChild) view.removeChild(view.firstChild);
    var figures = el("p", "pse-summary");
    figures.appendChild(el("strong", "pse-variant-id", v.id));
    var parts = [" — " + plural(v.total, "token") + " (" + v.encoding + ")"];
    if (v.model.usableWindow) {
      parts.push((100 * v.total / v.model.usableWindow).toFixed(2) + "% of the usable window of " + fmt(v.model.usableWindow));
    }
    if (v.model.compactLimit) parts.push(fmt(v.model.compactLimit - v.total) + " tokens before auto-compaction");
    // Codex's estimate, as measure.py sums it: ⌈bytes/4⌉ per text.
    var estimate = Math.ceil(utf8Length(v.base.text) / 4);
    v.messages.forEach(function (m) { m.sections.forEach(function (s) { estimate += Math.ceil(utf8Length(s.text) / 4); }); });
    var toolsJson = "[" + v.tools.tools.map(function (t) { return t.json; }).join(",") + "]";
    if (v.tools.tools.length) estimate += Math.ceil(utf8Length(toolsJson) / 4);
    parts.push("Codex estimate " + fmt(estimate));
    figures.appendChild(document.createTextNode(parts.join(" · ")));
    view.appendChild(figures);

    v.notes.forEach(function (note) { view.appendChild(el("p", "pse-note", note)); });

    // Blocks first (the bar and the order list point into them).
    var blocks = [];
    var prompt = el("div", "pse-prompt");
    var baseBlock = details("pse-base", [el("span", "pse-name", "instructions"),
      " · " + v.base.rule + (v.base.detail ? " (" + v.base.detail + ")" : "") + " · " + plural(v.base.tokens, "token") + " · ",
      el("span", "pse-source", v.base.source)], v.base.text, { "data-kind": "instructions" });
    prompt.appendChild(baseBlock);
    blocks.push({ label: "instructions", role: "base", tokens: v.base.tokens, block: baseBlock });
    v.messages.forEach(function (m, i) {
      var message = el("div", "pse-message pse-role-" + m.role);
      message.appendChild(el("div", "pse-message-head", "message " + (i + 1) + " · " + m.role + " · " + plural(m.tokens, "token")));
      m.sections.forEach(function (s) {
        var block = details("pse-section", [el("code", "pse-name", s.fragment),
          " · " + s.slot + " · " + plural(s.tokens, "token") + " · ", el("span", "pse-source", s.source)],
          s.text, { "data-fragment": s.fragment, "data-message": String(i + 1), "data-role": m.role });
        if (s.description) block.querySelector("summary").setAttribute("title", s.description);
        message.appendChild(block);
        blocks.push({ label: s.fragment, role: m.role, tokens: s.tokens, block: block });
      });
      prompt.appendChild(message);
    });
    var where = v.tools.placement === "input" ? "additional_tools item" : "tools field";
    if (v.tools.tools.length) {
      var toolBox = el("div", "pse-message pse-role-tools");
      toolBox.appendChild(el("div", "pse-message-head", "tools · " + where + " · " + plural(v.tools.tokens, "token") +
        " (offline count of the JSON as serialised; the API's own accounting of tools is not public)"));
      var listBlock = details("pse-section", [el("span", "pse-name", "tools"), " · " + v.tools.tools.map(function (t) {
        return t.name + " " + fmt(t.tokens);
      }).join(", ")], JSON.stringify(JSON.parse(toolsJson), null, 2), { "data-kind": "tools" });
      toolBox.appendChild(listBlock);
      prompt.appendChild(toolBox);
      blocks.push({ label: "tools", role: "tools", tokens: v.tools.tokens, block: listBlock });
    }

    // Token bar: one segment per block, sized by its tokens.
    var bar = el("div", "pse-bar");
    bar.setAttribute("role", "img");
    bar.setAttribute("aria-label", "tokens by section: " + blocks.map(function (b) { return b.label + " " + b.tokens; }).join(", "));
    blocks.forEach(function (b, i) {
      var seg = el("div", "pse-seg pse-seg-" + b.role + (i % 2 ? " pse-seg-alt" : ""), b.label + " " + fmt(b.tokens));
      seg.style.flexGrow = String(Math.max(b.tokens, 0));
      seg.style.flexBasis = "0";
      seg.title = b.label + " (" + b.role + "): " + plural(b.tokens, "token") + ", " +
        (v.total ? (100 * b.tokens / v.total).toFixed(1) : "0") + "%";
      seg.addEventListener("click", function () { b.block.open = true; b.block.scrollIntoView({ block: "nearest" }); });
      bar.appendChild(seg);
    });
    view.appendChild(bar);

    // Order: messages and sections in send order.
    var order = el("ol", "pse-order");
    var first = el("li", null, "instructions · " + plural(v.base.tokens, "token"));
    order.appendChild(first);
    v.messages.forEach(function (m, i) {
      var item = el("li", "pse-role-" + m.role);
      item.appendChild(el("span", null, "message " + (i + 1) + " · " + m.role + " · " + plural(m.tokens, "token")));
      var inner = el("ol");
      m.sections.forEach(function (s) {
        inner.appendChild(el("li", null, s.fragment + " (" + s.slot + ") · " + plural(s.tokens, "token")));
      });
      item.appendChild(inner);
      order.appendChild(item);
    });
    if (v.tools.tools.length || v.tools.deferred.length) {
      var toolItem = el("li", "pse-role-tools");
      toolItem.appendChild(el("span", null, "tools · " + where + " · " + plural(v.tools.tokens, "token")));
      var toolList = el("ol");
      v.tools.tools.forEach(function (t) { toolList.appendChild(el("li", null, t.name + " (" + t.kind + ") · " + plural(t.tokens, "token"))); });
      v.tools.deferred.forEach(function (name) { toolList.appendChild(el("li", null, name + " (deferred: listed in a section, not sent)")); });
      toolItem.appendChild(toolList);
      order.appendChild(toolItem);
    }
    var orderBox = el("details", "pse-order-box");
    orderBox.open = true;
    orderBox.appendChild(el("summary", null, "Order: " + plural(v.messages.length, "message") + " after the instructions"));
    orderBox.appendChild(order);
    view.appendChild(orderBox);

    var tools = el("p", "pse-tools");
    [["Expand all", true], ["Collapse all", false]].forEach(function (pair) {
      var button = el("button", "pse-button", pair[0]);
      button.type = "button";
      button.addEventListener("click", function () { blocks.forEach(function (b) { b.block.open = pair[1]; }); });
      tools.appendChild(button);
    });
    view.appendChild(tools);
    view.appendChild(prompt);
  }

  // -- wiring -----------------------------------------------------------------

  // A variant is named by the page's links as ?variant=ID (a query: site
  // engines check #anchors against the page's headings, and this is no
  // heading), and by the explorer itself as #variant=ID once the reader picks
  // one; the hash, the newer choice, wins.
  function fromHash(data) {
    var m = /^#variant=(.+)$/.exec(window.location.hash) || /[?&]variant=([^&]+)/.exec(window.location.search);
    if (!m) return null;
    var values = decodeURIComponent(m[1]).split("/");
    if (values.length !== data.axes.length) return null;
    var idx = values.map(function (v, a) { return data.axes[a][1].indexOf(v); });
    return idx.indexOf(-1) === -1 ? idx : null;
  }

  function start(root, raw) {
    var data = new Data(raw);
    var status = root.querySelector(".pse-status") || root.appendChild(el("p", "pse-status"));
    var selects = picker(root, data);
    var view = root.querySelector(".pse-view") || root.appendChild(el("div", "pse-view"));
    function show(updateHash) {
      var idx = selects.map(function (s, a) { return Math.max(0, data.axes[a][1].indexOf(s.value)); });
      var v = data.variantOf(idx);
      if (!v) {
        status.textContent = "This combination is not a variant: the spec's matrix rules exclude it.";
        view.hidden = true;
        root.setAttribute("data-variant", "");
        return;
      }
      status.textContent = plural(raw.variants, "variant") + " in " + raw.spec + "; showing " + v.id + ".";
      render(view, v);
      view.hidden = false;
      root.setAttribute("data-variant", v.id);
      if (updateHash && window.history && window.history.replaceState) {
        window.history.replaceState(null, "", "#variant=" + encodeURIComponent(v.id).replace(/%2F/g, "/"));
      }
    }
    function pickFromHash() {
      var idx = fromHash(data);
      if (idx) selects.forEach(function (s, a) { s.value = data.axes[a][1][idx[a]]; });
      return !!idx;
    }
    pickFromHash();
    selects.forEach(function (s) { s.addEventListener("change", function () { show(true); }); });
    // Links to another variant on the same page change only the hash.
    window.addEventListener("hashchange", function () { if (pickFromHash()) show(false); });
    show(false);
    root.setAttribute("data-ready", "true");
  }

  function init(root) {
    if (root.getAttribute("data-started")) return;
    root.setAttribute("data-started", "true");
    loadData(root).then(function (raw) { start(root, raw); }).catch(function (err) {
      var status = root.querySelector(".pse-status") || root.appendChild(el("p", "pse-status"));
      status.textContent = "The variant explorer could not load its data: " + err.message +
        (window.location.protocol === "file:" ? " (open the folder through a web server, e.g. python -m http.server)" : "");
      root.setAttribute("data-error", "true");
    });
  }

  function boot() {
    var roots = document.querySelectorAll(".promptspec-explorer[data-src]");
    for (var i = 0; i < roots.length; i++) init(roots[i]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
  // MkDocs Material's instant navigation swaps page content without a reload.
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(boot);
})();
