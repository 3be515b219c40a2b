// Catalog search: every word of the query must occur in a row's text; the selects narrow by chip and network.
// The table is complete without this script; it only hides rows. The query is kept in the URL (?q=…).
(function () {
  "use strict";
  var q = document.getElementById("q");
  var chip = document.getElementById("chip");
  var network = document.getElementById("network");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#catalog tbody tr"));
  var count = document.getElementById("count");
  var empty = document.getElementById("empty");

  function apply() {
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var text = row.getAttribute("data-search");
      var ok = words.every(function (w) { return text.indexOf(w) !== -1; }) &&
        (!chip.value || row.getAttribute("data-chip") === chip.value) &&
        (!network.value || row.getAttribute("data-network") === network.value);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " variants";
    empty.hidden = shown !== 0;
  }

  function remember() {
    var params = new URLSearchParams();
    if (q.value) { params.set("q", q.value); }
    if (chip.value) { params.set("chip", chip.value); }
    if (network.value) { params.set("network", network.value); }
    var search = params.toString();
    history.replaceState(null, "", search ? "?" + search : location.pathname);
  }

  var initial = new URLSearchParams(location.search);
  q.value = initial.get("q") || "";
  chip.value = initial.get("chip") || "";
  network.value = initial.get("network") || "";
  [q, chip, network].forEach(function (el) {
    el.addEventListener("input", function () { apply(); remember(); });
  });
  apply();
})();
