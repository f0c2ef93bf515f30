// The trace page's only script: a click on a step (or on a line of the
// narration) shows its details; a click on the header or Escape shows
// the run's. It reads and writes nothing but this page.
(function () {
  "use strict";
  function show(i) {
    var d = document.getElementById(i === null ? "d-run" : "d-" + i);
    if (!d) {
      return;
    }
    var all = document.querySelectorAll(".detail");
    for (var k = 0; k < all.length; k++) {
      all[k].hidden = true;
    }
    d.hidden = false;
    var sel = document.querySelectorAll(".selected");
    for (var k = 0; k < sel.length; k++) {
      sel[k].classList.remove("selected");
    }
    if (i === null) {
      return;
    }
    var s = document.getElementById("s-" + i);
    if (s) {
      s.classList.add("selected");
      s.scrollIntoView({block: "nearest", inline: "nearest"});
    }
    var lines = document.querySelectorAll("#narration li[data-step]");
    var first = null;
    for (var k = 0; k < lines.length; k++) {
      if (lines[k].getAttribute("data-step") === String(i)) {
        lines[k].classList.add("selected");
        first = first || lines[k];
      }
    }
    if (first) {
      first.scrollIntoView({block: "nearest"});
    }
  }
  document.addEventListener("click", function (e) {
    var t = e.target.closest("[data-step]");
    if (t) {
      show(t.getAttribute("data-step"));
    } else if (e.target.closest("[data-run]")) {
      show(null);
    }
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") {
      show(null);
    }
  });
})();
