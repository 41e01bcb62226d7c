// evosignal live pages: the one script of the pages, served from the
// binary (the Content-Security-Policy allows no other). Everything works
// without it but the live updates: a page whose <body> carries
// data-live-version polls /live/version every data-live-poll ms and, when
// the version changed, fetches the page again and puts its [data-live]
// parts (found by id) in place of the old ones. The page's markup is the
// server's, escaped there; DOMParser runs no script of what it parses.
"use strict";
(function () {
  const body = document.body;
  if (!body || !body.dataset.liveVersion) return;
  let version = body.dataset.liveVersion;
  const every = Math.max(500, Number(body.dataset.livePoll) || 2000);
  const status = document.getElementById("live-status");
  const say = (text) => { if (status) status.textContent = text; };

  async function refresh() {
    const res = await fetch(location.href, { cache: "no-store", headers: { Accept: "text/html" } });
    if (!res.ok) throw new Error("page " + res.status);
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    for (const old of document.querySelectorAll("[data-live]")) {
      const fresh = old.id && doc.getElementById(old.id);
      if (fresh) old.replaceWith(document.importNode(fresh, true));
    }
    version = doc.body.dataset.liveVersion || version;
    body.dataset.liveVersion = version;
    body.dataset.liveUpdates = String(Number(body.dataset.liveUpdates || "0") + 1);
    say("live · updated " + new Date().toLocaleTimeString());
  }

  async function tick() {
    try {
      const res = await fetch("/live/version", { cache: "no-store" });
      if (!res.ok) throw new Error("version " + res.status);
      const v = (await res.text()).trim();
      if (v !== version) await refresh();
      else say("live");
    } catch (e) {
      say("live updates paused (" + e.message + "); retrying");
    }
    setTimeout(tick, every);
  }
  setTimeout(tick, every);
})();
