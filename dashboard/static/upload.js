/* Media upload with a progress bar, for the composer and the media library: the three steps of
   /v1's upload (declare, PUT the bytes, complete), the first and last through the dashboard's own
   CSRF-checked routes. The bytes go straight to the upload URL, whose one-time token is the only
   credential. Everything else on these pages works without JavaScript. */
(function () {
  "use strict";
  function post(url, form, fields) {
    var body = new URLSearchParams();
    body.set("csrf_token", form.querySelector("input[name=csrf_token]").value);
    body.set("workspaceId", form.querySelector("input[name=workspaceId]").value);
    Object.keys(fields).forEach(function (k) { body.set(k, fields[k]); });
    return fetch(url, {method: "POST", body: body, credentials: "same-origin"}).then(function (answer) {
      if (!answer.ok) {
        // The server's words for the refusal (a type not taken names the types that are).
        return answer.json().then(function (refused) {
          throw new Error((refused.error && refused.error.message) || "refused");
        }, function () { throw new Error("refused"); });
      }
      return answer.json();
    });
  }
  function put(url, file, bar) {
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open("PUT", url);
      xhr.upload.onprogress = function (e) { if (e.lengthComputable) { bar.value = Math.round(e.loaded * 100 / e.total); } };
      xhr.onload = function () { if (xhr.status === 200) { bar.value = 100; resolve(); } else { reject(new Error("refused")); } };
      xhr.onerror = function () { reject(new Error("network")); };
      xhr.send(file);
    });
  }
  function chosen(input, media) {
    var list = document.getElementById("media-choices");
    if (!list || input.dataset.upload !== "choose") { window.location.reload(); return; }
    var label = document.createElement("label");
    label.className = "check";
    var box = document.createElement("input");
    box.type = "checkbox"; box.name = "mediaIds"; box.value = media.mediaId; box.checked = true;
    label.appendChild(box);
    label.appendChild(document.createTextNode(" " + media.filename));
    list.appendChild(label);
    document.body.dispatchEvent(new Event("media-added"));
  }
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[type=file][data-upload]") || !input.files.length) { return; }
    var file = input.files[0];
    var form = input.form || document.querySelector("form[data-upload-form]");
    var bar = document.getElementById("upload-progress");
    var status = document.getElementById("upload-status");
    bar.hidden = false; bar.value = 0;
    status.textContent = "Uploading " + file.name + "…";
    post("/dashboard/media/uploads", form, {filename: file.name, contentType: file.type || "application/octet-stream", size: String(file.size)})
      .then(function (upload) {
        return put("/v1/media/uploads/" + encodeURIComponent(upload.token), file, bar).then(function () {
          return post("/dashboard/media/uploads/" + encodeURIComponent(upload.token) + "/complete", form, {});
        });
      })
      .then(function (media) {
        status.textContent = "Uploaded " + media.filename + ".";
        input.value = "";
        chosen(input, media);
      })
      .catch(function (problem) {
        bar.hidden = true;
        status.textContent = problem && problem.message && problem.message !== "refused" && problem.message !== "network"
          ? problem.message
          : "The upload of " + file.name + " did not work: check your connection, then try again.";
      });
  });
}());
