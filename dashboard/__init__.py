"""The dashboard: server-rendered pages for people, working without JavaScript, one module per page
group (`inbox`, `posts`, `calendar`, `broadcasts`, ...), its templates in `templates/` and its
static files (the vendored htmx) in `static/`.

`views` holds what every view is built from (the workspace a person acts in, checked forms, pages,
live partials, confirmations, redirects back, refusals as pages), `forms` what forms share (names,
the accounts offered, values as `/v1` types, a form done once), `actions` the studio's shared views
(list, edit, save, pause, delete). `routes` is the one table of paths and views. Sessions, CSRF
and the page frame are oauth's (`oauth.shell`): the consent screen and sign-in share them.
"""
