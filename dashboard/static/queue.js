/* The queue editor's rows: "Add a slot" and each row's "Remove" act on the page, and the form
   saves them all at once. Without JavaScript the page offers one empty row to fill in, and a slot
   is removed by emptying its time. */
(function () {
  "use strict";
  var list = document.getElementById("queue-slots");
  var template = document.getElementById("slot-row-template");
  var add = document.getElementById("add-slot");
  if (!list || !template || !add) { return; }

  function renumber() {
    list.querySelectorAll("[data-slot-row]").forEach(function (row, index) {
      var n = String(index + 1);
      row.querySelectorAll("[data-slot-number]").forEach(function (span) {
        span.textContent = span.textContent.replace(/\S+$/, n);
      });
      var day = row.querySelector("select"), time = row.querySelector("input[type=time]");
      var labels = row.querySelectorAll("label");
      day.id = "slot-day-" + n; labels[0].htmlFor = day.id;
      time.id = "slot-time-" + n; labels[1].htmlFor = time.id;
    });
  }
  function enable(row) {
    var remove = row.querySelector("[data-remove-slot]");
    remove.hidden = false;
    remove.addEventListener("click", function () {
      var next = row.nextElementSibling || row.previousElementSibling;
      row.remove();
      renumber();
      (next ? next.querySelector("select") : add).focus();
    });
  }

  // The script adds rows itself: the empty row kept for a page without it goes.
  list.querySelectorAll("[data-slot-row]").forEach(function (row) {
    if (!row.querySelector("input[type=time]").value) { row.remove(); } else { enable(row); }
  });
  document.querySelectorAll("[data-no-script]").forEach(function (note) { note.hidden = true; });
  add.hidden = false;
  add.addEventListener("click", function () {
    var row = template.content.firstElementChild.cloneNode(true);
    list.appendChild(row);
    enable(row);
    renumber();
    row.querySelector("select").focus();
  });
  renumber();
})();
