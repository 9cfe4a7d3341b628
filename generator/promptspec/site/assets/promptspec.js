/* promptspec: "Expand all" / "Collapse all" for the sections of a variant
   page, and its line on where the variant ranks in the matrix. Optional:
   without JavaScript the buttons stay hidden, every section still opens on
   its own, and the line gives the matrix size. */
(function () {
  function wireToolbars() {
    document.querySelectorAll(".ps-toolbar").forEach(function (bar) {
      var expand = bar.querySelector(".ps-expand");
      var collapse = bar.querySelector(".ps-collapse");
      if (!expand || !collapse || bar.dataset.psWired) return;
      bar.dataset.psWired = "1";
      function setAll(open) {
        document.querySelectorAll("details.ps-section").forEach(function (d) { d.open = open; });
      }
      expand.addEventListener("click", function () { setAll(true); });
      collapse.addEventListener("click", function () { setAll(false); });
      expand.hidden = false;
      collapse.hidden = false;
    });
  }

  // -- where a variant ranks ----------------------------------------------------
  // The page holds only its own total (site/pages/variant.py place_line): the
  // rank and the gaps to the smallest and largest variant come from the totals
  // file, so an edit that changes some variants' tokens does not change every
  // other variant's page.  Numbers as site/html/markup.py's num and signed
  // write them; tests/site/test_browser.py holds the sentence to the one the
  // pages held before it moved here.

  var totals = {};

  function grouped(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function signed(n) { return n > 0 ? "+" + grouped(n) : (n === 0 ? "\u00b10" : "\u2212" + grouped(-n)); }
  function ordinal(n) {
    var suffix = (n % 100 >= 10 && n % 100 <= 20) ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
    return grouped(n) + suffix;
  }
  function countAbove(ranked, t) {  // how many are larger than t (ranked: smallest first)
    var lo = 0, hi = ranked.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (ranked[mid] <= t) lo = mid + 1; else hi = mid; }
    return ranked.length - lo;
  }
  function placement(ranked, t) {
    var n = ranked.length, lo = ranked[0], hi = ranked[n - 1];
    if (n === 1) return "the only variant of the matrix";
    var where = t === hi ? "largest of " + grouped(n)
      : t === lo ? "smallest of " + grouped(n)
      : ordinal(countAbove(ranked, t) + 1) + " largest of " + grouped(n);
    var over = t !== lo ? signed(t - lo) + " tokens over the smallest" : signed(hi - t) + " tokens under the largest";
    if (t !== lo && t !== hi) over += ", " + signed(t - hi) + " under the largest";
    return where + "; " + over;
  }
  function placeAll() {
    if (window.location.protocol === "file:") return;  // browsers refuse fetch() there: the line keeps the matrix size
    document.querySelectorAll(".ps-place[data-src]").forEach(function (line) {
      var t = Number(line.getAttribute("data-total"));
      var url = new URL(line.getAttribute("data-src"), document.baseURI).href;
      if (!totals[url]) {
        totals[url] = fetch(url, { credentials: "same-origin" }).then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        });
      }
      totals[url].then(function (data) {
        var ranked = data && data.totals;
        if (!Array.isArray(ranked) || !ranked.length || ranked.indexOf(t) < 0) return;  // another build's file
        line.textContent = "In the matrix: " + placement(ranked, t) + ".";
        line.removeAttribute("data-src");
      }, function () { delete totals[url]; });
    });
  }

  function wire() {
    wireToolbars();
    placeAll();
  }
  if (typeof document$ !== "undefined" && document$.subscribe) {
    document$.subscribe(wire);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", wire);
  } else {
    wire();
  }
})();
