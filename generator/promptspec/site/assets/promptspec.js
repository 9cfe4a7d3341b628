/* promptspec: "Expand all" / "Collapse all" for the sections of a variant
   page. Optional: without JavaScript the buttons stay hidden and every
   section still opens on its own. */
(function () {
  function wire() {
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
  if (typeof document$ !== "undefined" && document$.subscribe) {
    document$.subscribe(wire);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", wire);
  } else {
    wire();
  }
})();
