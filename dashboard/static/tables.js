/* On a phone a table's rows are stacked cards (dashboard.css): each cell is named by its column's
   header, copied here into `data-label`, which the stylesheet shows above the cell. Run on the
   page and again after each live part is swapped in. Without JavaScript the rows still stack. */
(function () {
  "use strict";
  function label(root) {
    root.querySelectorAll("table").forEach(function (table) {
      var names = [];
      table.querySelectorAll("thead th").forEach(function (th) {
        var span = th.colSpan || 1;
        for (var i = 0; i < span; i += 1) { names.push(th.textContent.trim()); }
      });
      if (!names.length) { return; }
      table.querySelectorAll("tbody tr").forEach(function (row) {
        var column = 0;
        Array.prototype.forEach.call(row.cells, function (cell) {
          if (!cell.hasAttribute("data-label") && cell.colSpan === 1) {
            cell.setAttribute("data-label", names[column] || "");
          }
          column += cell.colSpan || 1;
        });
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () { label(document); });
  document.addEventListener("htmx:afterSettle", function (event) { label(event.target || document); });
}());
