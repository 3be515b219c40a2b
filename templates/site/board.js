// P4/P4X boards: the installer cannot tell the chip revisions apart, so the Install and Update buttons of a
// revision stay hidden until the reader says which chip their board has; the other revision's buttons stay hidden.
(function () {
  "use strict";
  var sections = Array.prototype.slice.call(document.querySelectorAll("section[data-revision]"));
  var radios = Array.prototype.slice.call(document.querySelectorAll(".revision-picker input[name=revision]"));

  function show(chosen) {
    sections.forEach(function (section) {
      var match = section.getAttribute("data-revision") === chosen;
      section.querySelector(".actions").hidden = !match;
      var gate = section.querySelector(".revision-gate");
      gate.hidden = match;
      gate.textContent = chosen ? "Not for your chip: this firmware is for the other revision."
        : "Choose your chip revision at the top of the page to install this firmware.";
    });
  }

  radios.forEach(function (radio) {
    radio.addEventListener("change", function () { show(radio.value); });
  });
  var checked = radios.filter(function (r) { return r.checked; })[0];
  show(checked ? checked.value : "");
})();
