/* The week's drag and drop: a post that can still move, dropped on another day and hour, opens
   the server's confirmation of that move (from → to, judged by the same rules as the move) in a
   dialog. Move sends the same CSRF-checked form as the "Move to…" page; a refusal stays in the
   dialog, in words, and the calendar stays as it was. Cancel closes the dialog and nothing moves.
   Without JavaScript (or with the keyboard), each post's "Move to…" page does the same. */
(function () {
  "use strict";
  var dialog = document.getElementById("move-dialog");
  if (!dialog || typeof dialog.showModal !== "function") { return; }
  var pad = function (n) { return (n < 10 ? "0" : "") + n; };

  function show(html) {
    dialog.innerHTML = html;
    // Named by the confirmation's own heading, which exists only while the dialog holds one.
    if (dialog.querySelector("#move-question")) { dialog.setAttribute("aria-labelledby", "move-question"); }
    else { dialog.setAttribute("aria-label", "Move"); }
    if (!dialog.open) { dialog.showModal(); }
    var first = dialog.querySelector("button, [data-cancel]");
    if (first) { first.focus(); }
  }

  function ask(post, slot) {
    var query = new URLSearchParams({
      workspace: dialog.dataset.workspace, tz: dialog.dataset.tz, back: dialog.dataset.back, part: "confirm",
      date: slot.dataset.day, time: pad(Number(slot.dataset.hour)) + ":" + pad(Number(post.dataset.minute || 0))
    });
    fetch("/dashboard/posts/" + encodeURIComponent(post.dataset.post) + "/move?" + query.toString(),
          {credentials: "same-origin"})
      .then(function (answer) { return answer.text(); })
      .then(show)
      .catch(function () { show("<p role=\"alert\">The move could not be prepared: try again.</p>" +
                                "<button type=\"button\" data-cancel>Close</button>"); });
  }

  var dragged = null;
  document.addEventListener("dragstart", function (event) {
    var entry = event.target.closest && event.target.closest("[data-post]");
    if (!entry) { return; }
    dragged = entry;
    event.dataTransfer.setData("text/plain", entry.dataset.post);
    event.dataTransfer.effectAllowed = "move";
  });
  document.addEventListener("dragend", function () { dragged = null; });
  document.addEventListener("dragover", function (event) {
    if (dragged && event.target.closest && event.target.closest("[data-slot]")) { event.preventDefault(); }
  });
  document.addEventListener("drop", function (event) {
    var slot = event.target.closest && event.target.closest("[data-slot]");
    if (!slot || !dragged) { return; }
    event.preventDefault();
    ask(dragged, slot);
  });

  dialog.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-cancel]")) {
      event.preventDefault();
      dialog.close();
    }
  });
  dialog.addEventListener("close", function () {
    dialog.innerHTML = "";
    dialog.removeAttribute("aria-labelledby");
    dialog.removeAttribute("aria-label");
  });
  dialog.addEventListener("submit", function (event) {
    var form = event.target;
    event.preventDefault();
    var body = new URLSearchParams(new FormData(form));
    body.set("part", "confirm");
    // A move that worked answers a redirect (the calendar again, with its message): reload to show it.
    fetch(form.action, {method: "POST", body: body, credentials: "same-origin", redirect: "manual"})
      .then(function (answer) {
        if (answer.type === "opaqueredirect" || (answer.status >= 300 && answer.status < 400)) {
          window.location.reload();
          return null;
        }
        return answer.text().then(show);
      })
      .catch(function () { show("<p role=\"alert\">The move could not be sent: try again.</p>" +
                                "<button type=\"button\" data-cancel>Close</button>"); });
  });
}());
