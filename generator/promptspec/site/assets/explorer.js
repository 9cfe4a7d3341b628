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

  // Characters a reader cannot see but a model reads (zero-width, bidi,
  // tag characters...): shown as \u200b-style escapes, as promptspec's other
  // outputs show them (errors.INVISIBLE in Python holds the same class).
  var INVISIBLE = /[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u{110bd}\u{110cd}\u{13430}-\u{1343f}\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu;

  function reveal(text) {
    return text.replace(INVISIBLE, function (ch) {
      var out = "";
      for (var i = 0; i < ch.length; i++) out += "\\u" + ("000" + ch.charCodeAt(i).toString(16)).slice(-4);
      return out;
    });
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = reveal(String(text));
    return node;
  }

  function fmt(n) {
    return n === null || n === undefined ? "?" : Number(n).toLocaleString("en-US");
  }

  function plural(n, word) {
    return fmt(n) + " " + word + (n === 1 ? "" : "s");
  }

  // Messages are numbered 00, 01 and sections [01], [02], as on variant pages.
  function pad2(n) {
    return (n < 10 ? "0" : "") + n;
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
      conversations: this.conversationsOf(idx),
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
    pre.textContent = reveal(text);
    box.appendChild(pre);
    return box;
  }

  // Each conversation of the spec from this variant: its requests and the items each adds.
  Data.prototype.conversationsOf = function (idx) {
    var raw = this.raw, texts = this.texts, self = this;
    return (raw.conversations || []).map(function (c) {
      var id = self.lookup(c[2], idx);
      return {
        name: c[0], description: c[1],
        requests: id >= 0 ? raw.threads[id].map(function (r) {
          return { kind: r[0], reason: r[1], items: r[2].map(function (m) {
            return { role: raw.roles[m[0]], texts: m[1].map(function (t) { return texts[t]; }) };
          }) };
        }) : null
      };
    });
  };

  function renderConversations(view, v) {
    if (!v.conversations.length) return;
    var box = el("div", "pse-conversations");
    box.appendChild(el("h3", null, "Conversations from this variant"));
    v.conversations.forEach(function (c) {
      var block = details("pse-conversation", [el("span", "pse-name", c.name),
        c.requests ? " · " + plural(c.requests.length, "request") : " · kept for the first variant of each model only"], "",
        { "data-conversation": c.name });
      block.removeChild(block.lastChild);
      if (c.description) block.appendChild(el("p", "pse-note", c.description));
      (c.requests || []).forEach(function (r, n) {
        var chars = 0;
        r.items.forEach(function (m) { m.texts.forEach(function (t) { chars += utf8Length(t); }); });
        var head = "request " + (n + 1) + " · " + r.kind + (r.reason ? " (" + r.reason + ")" : "") + " · adds " +
          plural(r.items.length, "item") + " · ≈" + fmt(Math.ceil(chars / 4)) + " tokens (Codex estimate)";
        var req = details("pse-request", [head], "", { "data-kind": r.kind });
        req.removeChild(req.lastChild);
        r.items.forEach(function (m) {
          m.texts.forEach(function (t) { req.appendChild(details("pse-section", [el("span", "pse-role", m.role)], t)); });
        });
        block.appendChild(req);
      });
      box.appendChild(block);
    });
    view.appendChild(box);
  }

  function render(view, v, links) {
    while (view.firstChild) view.removeChild(view.firstChild);
    if (links) view.appendChild(hubLinks(links, v));
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
      message.appendChild(el("div", "pse-message-head", pad2(i) + " · " + m.role + " message · " + plural(m.tokens, "token")));
      m.sections.forEach(function (s, j) {
        var block = details("pse-section", [el("span", "pse-idx", "[" + pad2(j + 1) + "] "), el("code", "pse-name", s.fragment),
          " · " + s.slot + " · " + plural(s.tokens, "token") + " · ", el("span", "pse-source", s.source)],
          s.text, { "data-fragment": s.fragment, "data-message": pad2(i), "data-role": m.role });
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
      item.appendChild(el("span", null, pad2(i) + " · " + m.role + " message · " + plural(m.tokens, "token")));
      var inner = el("ol");
      m.sections.forEach(function (s, j) {
        inner.appendChild(el("li", null, "[" + pad2(j + 1) + "] " + s.fragment + " (" + s.slot + ") · " + plural(s.tokens, "token")));
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
    renderConversations(view, v);
  }

  // -- the explorer as a hub: links to a variant's page and JSON ---------------

  // Read from the root's attributes (build.explorer_page): URL templates
  // with "{slug}" (a variant's values joined by "--"), and which variants
  // have a page: "all", "none" or a JSON list of ids.
  function linkConfig(root) {
    var page = root.getAttribute("data-page-url"), json = root.getAttribute("data-json-url");
    if (!page) return null;
    var paged = root.getAttribute("data-paged") || "all", ids = null;
    if (paged !== "all" && paged !== "none") {
      try { ids = {}; JSON.parse(paged).forEach(function (id) { ids[id] = true; }); } catch (e) { ids = {}; }
    }
    return {
      has: function (v) { return paged === "all" || (ids !== null && !!ids[v.id]); },
      page: function (v) { return page.split("{slug}").join(v.values.join("--")); },
      json: function (v) { return json ? json.split("{slug}").join(v.values.join("--")) : null; }
    };
  }

  function hubLinks(links, v) {
    var p = el("p", "pse-links");
    if (!links.has(v)) {
      p.appendChild(document.createTextNode("This variant has no page of its own on this site."));
      return p;
    }
    var a = el("a", "pse-page-link", "Variant page");
    a.href = links.page(v);
    p.appendChild(a);
    var href = links.json(v);
    if (href) {
      p.appendChild(document.createTextNode(" · "));
      var j = el("a", "pse-json-link", "Responses API request (JSON)");
      j.href = href;
      j.setAttribute("download", "");
      p.appendChild(j);
    }
    return p;
  }

  function variantLink(v, links) {
    var a = el("a", "pse-vlink", v.id);
    a.href = links && links.has(v) ? links.page(v) : "#variant=" + encodeURIComponent(v.id).replace(/%2F/g, "/");
    return a;
  }

  // -- two variants side by side, section by section --------------------------

  function sectionsOf(v) {
    var out = [{ key: "instructions", label: "instructions", where: "base", text: v.base.text, tokens: v.base.tokens }];
    v.messages.forEach(function (m, i) {
      m.sections.forEach(function (s, j) {
        out.push({ key: s.fragment, label: s.fragment, where: pad2(i) + " [" + pad2(j + 1) + "]", text: s.text, tokens: s.tokens });
      });
    });
    return out;
  }

  // Rows in A's order, then what only B has: [name, a part|null, b part|null].
  function pairSections(a, b) {
    var sa = sectionsOf(a), sb = sectionsOf(b), byB = {}, seen = {}, rows = [];
    sb.forEach(function (s) { byB[s.key] = s; });
    sa.forEach(function (s) { seen[s.key] = true; rows.push([s.key, s, byB[s.key] || null]); });
    sb.forEach(function (s) { if (!seen[s.key]) rows.push([s.key, null, s]); });
    return rows;
  }

  function renderCompare(box, a, b, links) {
    while (box.firstChild) box.removeChild(box.firstChild);
    var rows = pairSections(a, b), differ = 0;
    var head = el("p", "pse-compare-head");
    head.appendChild(variantLink(a, links));
    head.appendChild(document.createTextNode(" (" + plural(a.total, "token") + ") vs "));
    head.appendChild(variantLink(b, links));
    var delta = a.total - b.total;
    head.appendChild(document.createTextNode(" (" + plural(b.total, "token") + "): " + (delta > 0 ? "+" : delta < 0 ? "−" : "±") + fmt(Math.abs(delta)) + " tokens"));
    box.appendChild(head);
    var table = el("table", "pse-compare-table");
    var thead = el("thead"), tr = el("tr");
    ["part", "where", "A tokens", "B tokens", "Δ", "text"].forEach(function (t) { tr.appendChild(el("th", null, t)); });
    thead.appendChild(tr);
    table.appendChild(thead);
    var tbody = el("tbody");
    rows.forEach(function (row) {
      var x = row[1], y = row[2];
      var state = !x ? "only in B" : !y ? "only in A" : x.text === y.text ? "same" : "differs";
      if (state !== "same") differ++;
      var r = el("tr", "pse-cmp-" + state.replace(/ /g, "-"));
      r.setAttribute("data-part", row[0]);
      r.setAttribute("data-state", state);
      r.appendChild(el("th", null, row[0]));
      r.appendChild(el("td", null, (x || y).where));
      r.appendChild(el("td", "pse-r", x ? fmt(x.tokens) : "–"));
      r.appendChild(el("td", "pse-r", y ? fmt(y.tokens) : "–"));
      var d = (x ? x.tokens : 0) - (y ? y.tokens : 0);
      r.appendChild(el("td", "pse-r", d > 0 ? "+" + fmt(d) : d < 0 ? "−" + fmt(-d) : "±0"));
      var cell = el("td");
      if (state === "same") {
        cell.textContent = "same text";
      } else {
        var det = el("details", "pse-cmp-text");
        det.appendChild(el("summary", null, state));
        var grid = el("div", "pse-cmp-grid");
        [x, y].forEach(function (part, k) {
          var col = el("div");
          col.appendChild(el("div", "pse-cmp-label", k === 0 ? "A" : "B"));
          col.appendChild(el("pre", "pse-text", part ? part.text : "(not sent)"));
          grid.appendChild(col);
        });
        det.appendChild(grid);
        cell.appendChild(det);
      }
      r.appendChild(cell);
      tbody.appendChild(r);
    });
    table.appendChild(tbody);
    box.appendChild(table);
    box.setAttribute("data-differ", String(differ));
  }

  // -- finding prompt text ---------------------------------------------------

  // Which variants send each text: every present cell of the axis product is
  // visited once, and each of its base and sections is looked up (the same
  // columns variantOf reads).  Built on the first search, then kept.
  Data.prototype.usesOfTexts = function () {
    if (this._uses) return this._uses;
    var raw = this.raw, self = this, uses = {};
    var runs = raw.present, n = this.sizes.length;
    function add(textId, what, flat) {
      var key = textId + ":" + what;
      var u = uses[key] || (uses[key] = { text: textId, what: what, cells: [] });
      u.cells.push(flat);
    }
    for (var r = 0; r < runs.length; r += 2) {
      for (var flat = runs[r]; flat < runs[r] + runs[r + 1]; flat++) {
        var idx = [], k = flat;
        for (var a = n - 1; a >= 0; a--) { idx[a] = k % self.sizes[a]; k = Math.floor(k / self.sizes[a]); }
        var b = self.lookup(raw.columns.base, idx);
        if (b >= 0) add(raw.bases[b][0], -1, flat);
        // Only the fragments the variant's skeleton sends.
        raw.skeletons[self.lookup(raw.columns.skeleton, idx)].forEach(function (entry) {
          for (var e = 1; e < entry.length; e++) {
            var sid = self.lookup(raw.columns.sections[entry[e]], idx);
            if (sid >= 0) add(raw.sections[sid][0], entry[e], flat);
          }
        });
      }
    }
    var byText = {};
    Object.keys(uses).forEach(function (key) {
      var u = uses[key];
      (byText[u.text] || (byText[u.text] = [])).push(u);
    });
    this._uses = byText;
    return byText;
  };

  Data.prototype.cellValues = function (flat) {
    var idx = [], k = flat;
    for (var a = this.sizes.length - 1; a >= 0; a--) { idx[a] = k % this.sizes[a]; k = Math.floor(k / this.sizes[a]); }
    var self = this;
    return idx.map(function (i, a) { return self.axes[a][1][i]; });
  };

  function isWordChar(ch) {
    return !!ch && /[A-Za-z0-9_]/.test(ch);
  }

  // Case-insensitive; `whole`: the match is not part of a longer word.
  function matches(text, query, whole) {
    var hay = text.toLowerCase(), needle = query.toLowerCase(), from = 0;
    while (true) {
      var at = hay.indexOf(needle, from);
      if (at < 0) return false;
      if (!whole) return true;
      var before = text.charAt(at - 1), after = text.charAt(at + needle.length);
      var startOk = !isWordChar(needle.charAt(0)) || !isWordChar(before);
      var endOk = !isWordChar(needle.charAt(needle.length - 1)) || !isWordChar(after);
      if (startOk && endOk) return true;
      from = at + 1;
    }
  }

  var LIST_VARIANTS = 12;

  function renderFind(out, data, query, whole, links) {
    while (out.firstChild) out.removeChild(out.firstChild);
    out.removeAttribute("data-count");
    out.removeAttribute("data-sections");
    if (query.length < 2) {
      out.appendChild(el("p", "pse-status", "Type at least two characters."));
      return;
    }
    var byText = data.usesOfTexts(), raw = data.raw, hits = [], cells = {};
    data.texts.forEach(function (text, id) {
      if (byText[id] && matches(text, query, whole)) {
        byText[id].forEach(function (u) { hits.push(u); u.cells.forEach(function (c) { cells[c] = true; }); });
      }
    });
    var count = Object.keys(cells).length;
    out.setAttribute("data-count", String(count));
    out.setAttribute("data-sections", String(hits.length));
    out.appendChild(el("p", "pse-find-summary", hits.length
      ? plural(hits.length, "distinct text") + (hits.length === 1 ? " contains" : " contain") + " it, sent by " + plural(count, "variant") + " of " + fmt(raw.variants) + "."
      : "No prompt text contains it."));
    hits.sort(function (x, y) { return y.cells.length - x.cells.length || x.what - y.what; });
    var list = el("ul", "pse-find-list");
    hits.forEach(function (u) {
      var li = el("li", "pse-find-hit");
      var name = u.what < 0 ? "instructions" : raw.fragments[u.what][0];
      li.setAttribute("data-part", name);
      li.setAttribute("data-variants", String(u.cells.length));
      var head = el("div", "pse-find-head");
      head.appendChild(el("code", "pse-name", name));
      head.appendChild(document.createTextNode(" · " + plural(u.cells.length, "variant") + ": "));
      li.appendChild(head);
      var text = data.texts[u.text], at = text.toLowerCase().indexOf(query.toLowerCase());
      var lo = Math.max(0, at - 60), hi = Math.min(text.length, at + query.length + 60);
      var snip = el("div", "pse-find-snippet");
      snip.appendChild(document.createTextNode((lo > 0 ? "…" : "") + text.slice(lo, at)));
      snip.appendChild(el("mark", null, text.slice(at, at + query.length)));
      snip.appendChild(document.createTextNode(text.slice(at + query.length, hi) + (hi < text.length ? "…" : "")));
      li.appendChild(snip);
      var vs = el("div", "pse-find-variants");
      u.cells.slice(0, LIST_VARIANTS).forEach(function (c, i) {
        var values = data.cellValues(c);
        if (i) vs.appendChild(document.createTextNode(" · "));
        vs.appendChild(variantLink({ id: values.join("/"), values: values }, links));
      });
      if (u.cells.length > LIST_VARIANTS) vs.appendChild(document.createTextNode(" and " + fmt(u.cells.length - LIST_VARIANTS) + " more"));
      li.appendChild(vs);
      list.appendChild(li);
    });
    out.appendChild(list);
  }

  function findBox(root, data, links) {
    var box = root.querySelector(".pse-find") || el("details", "pse-find");
    if (!box.parentNode) {
      box.appendChild(el("summary", null, "Find prompt text"));
      var form = el("form", "pse-find-form");
      var input = el("input", "pse-find-input");
      input.type = "search";
      input.placeholder = "a phrase from any prompt text";
      input.setAttribute("aria-label", "find prompt text");
      var label = el("label", "pse-find-whole");
      var whole = el("input");
      whole.type = "checkbox";
      label.appendChild(whole);
      label.appendChild(document.createTextNode(" whole words"));
      form.appendChild(input);
      form.appendChild(label);
      box.appendChild(form);
      var out = el("div", "pse-find-results");
      out.setAttribute("role", "status");
      box.appendChild(out);
      var timer = null;
      function run() { renderFind(out, data, input.value.trim(), whole.checked, links); }
      input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 150); });
      whole.addEventListener("change", run);
      form.addEventListener("submit", function (event) { event.preventDefault(); run(); });
      var picker = root.querySelector(".pse-picker");
      root.insertBefore(box, picker ? picker.nextSibling : root.firstChild);
    }
    return box;
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

  function comparePicker(root, data) {
    var box = el("details", "pse-compare");
    box.appendChild(el("summary", null, "Compare with another variant"));
    var form = el("form", "pse-picker pse-picker-b");
    var selects = data.axes.map(function (axis) {
      var label = el("label", "pse-axis");
      label.appendChild(el("span", null, axis[0]));
      label.appendChild(document.createTextNode(" "));
      var select = el("select");
      select.setAttribute("data-axis-b", axis[0]);
      axis[1].forEach(function (v) { var o = el("option", null, v); o.value = v; select.appendChild(o); });
      label.appendChild(select);
      form.appendChild(label);
      return select;
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    box.appendChild(form);
    var out = el("div", "pse-compare-view");
    box.appendChild(out);
    return { box: box, selects: selects, out: out };
  }

  function start(root, raw) {
    var data = new Data(raw);
    var links = linkConfig(root);
    var status = root.querySelector(".pse-status") || root.appendChild(el("p", "pse-status"));
    var selects = picker(root, data);
    findBox(root, data, links);
    var cmp = comparePicker(root, data);
    root.insertBefore(cmp.box, status);
    var view = root.querySelector(".pse-view") || root.appendChild(el("div", "pse-view"));
    function pick(list) {
      return list.map(function (s, a) { return Math.max(0, data.axes[a][1].indexOf(s.value)); });
    }
    function showCompare(v) {
      if (!cmp.box.open || !v) return;
      var w = data.variantOf(pick(cmp.selects));
      if (!w) {
        while (cmp.out.firstChild) cmp.out.removeChild(cmp.out.firstChild);
        cmp.out.appendChild(el("p", "pse-status", "This combination is not a variant: the spec's matrix rules exclude it."));
        root.setAttribute("data-compare", "");
        return;
      }
      renderCompare(cmp.out, v, w, links);
      root.setAttribute("data-compare", w.id);
    }
    function show(updateHash) {
      var idx = pick(selects);
      var v = data.variantOf(idx);
      if (!v) {
        status.textContent = "This combination is not a variant: the spec's matrix rules exclude it.";
        view.hidden = true;
        root.setAttribute("data-variant", "");
        return;
      }
      status.textContent = plural(raw.variants, "variant") + " in " + raw.spec + "; showing " + v.id + ".";
      render(view, v, links);
      view.hidden = false;
      root.setAttribute("data-variant", v.id);
      showCompare(v);
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
    function current() { return data.variantOf(pick(selects)); }
    cmp.selects.forEach(function (s) { s.addEventListener("change", function () { showCompare(current()); }); });
    cmp.box.addEventListener("toggle", function () { showCompare(current()); });
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
