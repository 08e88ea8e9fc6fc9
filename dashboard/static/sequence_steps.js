/* A sequence's steps added and removed on the page: "Add a step" appends an empty row, each step's
   "Remove step N" takes its row away, and the rows are numbered again so the labels stay true.
   Without JavaScript the form offers one spare row to fill (a new step) and a "Remove step N when
   saving" box per step instead; the server reads the rows in order, whatever their numbers. */
(function () {
  "use strict";
  var box = document.getElementById("steps");
  var add = document.getElementById("add-step");
  if (!box || !add) { return; }
  var note = document.getElementById("steps-note");
  var max = Number(box.dataset.max || 20);
  var spare = box.querySelector("[data-spare]");
  var blank = (spare || box.querySelector("[data-step]")).cloneNode(true);
  if (spare) { spare.remove(); }
  blank.removeAttribute("data-spare");
  var hint = blank.querySelector("legend .muted");
  if (hint) { hint.remove(); }
  blank.querySelectorAll("input, textarea").forEach(function (field) {
    if (field.type === "number") { field.value = "0"; } else if (field.type !== "checkbox") { field.value = ""; }
  });
  blank.querySelectorAll("p.muted").forEach(function (p) { p.remove(); });
  if (!blank.querySelector("[data-remove-step]")) {
    var actions = document.createElement("div");
    actions.className = "actions";
    actions.innerHTML = "<button type=\"button\" class=\"secondary\" data-remove-step>Remove step 1</button>";
    blank.appendChild(actions);
  }

  function rows() { return Array.prototype.slice.call(box.querySelectorAll("[data-step]")); }

  function renumber() {
    rows().forEach(function (row, index) {
      var n = index + 1;
      row.querySelectorAll("[id], [name], [for]").forEach(function (el) {
        ["id", "name", "for"].forEach(function (attr) {
          var value = el.getAttribute(attr);
          if (value) { el.setAttribute(attr, value.replace(/^step-\d+-/, "step-" + n + "-")); }
        });
      });
      row.querySelectorAll("legend, label, [data-remove-step]").forEach(function (el) {
        el.childNodes.forEach(function (node) {
          if (node.nodeType === 3) { node.nodeValue = node.nodeValue.replace(/Step \d+|step \d+/, function (m) {
            return m.slice(0, 5) + n;
          }); }
        });
      });
    });
    add.disabled = rows().length >= max;
  }

  function ready(row) {
    row.querySelectorAll("[data-remove-check]").forEach(function (el) { el.remove(); });
    row.querySelectorAll("[data-remove-step]").forEach(function (el) { el.hidden = false; });
  }

  rows().forEach(ready);
  add.hidden = false;
  renumber();
  add.addEventListener("click", function () {
    if (rows().length >= max) { return; }
    var row = blank.cloneNode(true);
    ready(row);
    box.appendChild(row);
    renumber();
    note.textContent = "Added step " + rows().length + ".";
    row.querySelector("textarea").focus();
  });
  box.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-remove-step]");
    if (!button) { return; }
    var row = button.closest("[data-step]");
    var n = rows().indexOf(row) + 1;
    row.remove();
    renumber();
    note.textContent = "Removed step " + n + ".";
    add.focus();
  });
}());
