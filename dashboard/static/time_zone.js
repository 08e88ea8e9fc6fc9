/* The browser's time zone, for the dashboard to show times in: filled into the sign-in form's
   hidden field, and sent once from the first page of a person whose zone is not known yet (one who
   signed in through an identity provider or an invitation); the page then reloads in that zone.
   Without JavaScript times are shown in UTC until the person picks a zone on their profile. */
(function () {
  "use strict";
  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
  if (!zone) { return; }
  document.querySelectorAll("input[data-browser-zone]").forEach(function (input) { input.value = zone; });
  var token = document.querySelector("input[name=csrf_token]");
  if (!document.body.hasAttribute("data-zone-unset") || !token) { return; }
  var body = new URLSearchParams();
  body.set("csrf_token", token.value);
  body.set("timeZone", zone);
  fetch("/dashboard/profile/browser-zone", {method: "POST", body: body, credentials: "same-origin"})
    .then(function (answer) { return answer.ok ? answer.json() : {saved: false}; })
    .then(function (answer) { if (answer.saved && zone !== "UTC") { window.location.reload(); } })
    .catch(function () { /* the page stays in UTC; the profile page sets the zone */ });
})();
