/* The calendar's drag and drop: a scheduled post dropped on another day is moved there, at the
   same time of day, through the same CSRF-checked form as the post page's "Move to day" (which is
   how a keyboard moves it). Without JavaScript the calendar is a plain page. */
(function () {
  "use strict";
  var form = document.getElementById("move-form");
  if (!form) { return; }
  var status = document.getElementById("move-status");
  document.addEventListener("dragstart", function (event) {
    var entry = event.target.closest && event.target.closest("[data-post]");
    if (!entry) { return; }
    event.dataTransfer.setData("text/plain", entry.dataset.post);
    event.dataTransfer.effectAllowed = "move";
  });
  document.addEventListener("dragover", function (event) {
    if (event.target.closest && event.target.closest("[data-day]")) { event.preventDefault(); }
  });
  document.addEventListener("drop", function (event) {
    var day = event.target.closest && event.target.closest("[data-day]");
    var post = event.dataTransfer.getData("text/plain");
    if (!day || !post) { return; }
    event.preventDefault();
    var body = new URLSearchParams(new FormData(form));
    body.set("date", day.dataset.day);
    status.textContent = "Moving…";
    fetch("/dashboard/posts/" + encodeURIComponent(post) + "/move", {method: "POST", body: body, credentials: "same-origin"})
      .then(function (answer) {
        if (answer.ok) { window.location.reload(); return; }
        status.textContent = "That post could not move there: open it to see why.";
      })
      .catch(function () { status.textContent = "That post could not move: try again."; });
  });
}());
