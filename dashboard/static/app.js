// The live page: fences and devices on a map, transitions as they are
// published, one device's engine state and the fleet's misbehaving list.
// Data: GET /api/* and the server-sent events of GET /events.
"use strict";
(function () {
  const $ = (s) => document.querySelector(s);
  // Leaflet tooltips and popups are HTML; device ids and fence names are not.
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
  const plural = (n, one) => n + " " + one + (n === 1 ? "" : "s");
  const state = {
    fences: null, fenceLayer: null, markers: {}, devices: {}, tracks: {}, trail: {}, ticks: 0,
    counts: { transitions: 0, historic: 0, late: 0, rejected: 0 },
    panel: null, panelTimer: null, fleetKey: null, fleetBusy: false, fleetAgain: false,
  };
  window.edgefence = state; // for the browser tests and the curious

  // Labels stay on the map up to this many devices; beyond, they would
  // hide the map, and show on hover.
  const labelMax = 300;
  // A device's track: its positions over the last minutes, as the
  // server recorded them for open pages (the tracks event) and as this
  // page has seen them since (the server keeps the same bounds).
  const trackSpan = 10 * 60 * 1000, trackPoints = 60;
  // Devices drawn within this many pixels of each other are spread out.
  const spreadPx = 8;

  // Times are the browser's local time; the header says which zone.
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  function localTime(iso) {
    if (!iso) return "–";
    const d = new Date(iso);
    if (isNaN(d)) return iso;
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()) + "." + pad(d.getMilliseconds(), 3);
  }
  function zone() {
    const off = -new Date().getTimezoneOffset(), a = Math.abs(off);
    const utc = "UTC" + (off < 0 ? "-" : "+") + pad(Math.floor(a / 60)) + ":" + pad(a % 60);
    const name = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return name && name !== "UTC" && name !== "Etc/UTC" ? name + " (" + utc + ")" : utc;
  }
  $("#tz").textContent = "times: " + zone();

  const map = L.map("map").setView([52.52, 13.40], 12);
  map.createPane("tracks").style.zIndex = 390; // under the fences and devices
  const legs = L.layerGroup().addTo(map);
  fetch("api/config").then((r) => r.json()).then((c) => {
    if (!c.tiles) return;
    const opts = { maxZoom: 19, attribution: esc(c.attribution || "") };
    if (c.max_zoom >= 0) { opts.minNativeZoom = c.min_zoom; opts.maxNativeZoom = c.max_zoom; }
    let failed = 0;
    L.tileLayer(c.tiles, opts).on("tileerror", () => {
      $("#tiles-status").textContent = plural(++failed, "map tile") + " failed to load";
    }).addTo(map);
  }).catch(() => {});

  const fenceFilter = () => $("#filter-fence").value;
  const deviceFilter = () => $("#filter-device").value.trim();
  const shown = (device, fences) => {
    const d = deviceFilter(), f = fenceFilter();
    return (!d || device.includes(d)) && (!f || fences.includes(f));
  };
  const link = (id) => "#device=" + encodeURIComponent(id);
  // A table cell of a kind: id (ids and names, which a narrow screen may
  // break anywhere), num (a figure and its unit, never broken), pos, type.
  const cell = (tr, kind) => { const c = tr.insertCell(); c.className = kind; return c; };
  const show = (id) => { location.hash = link(id); };

  // Who is inside a fence, of the devices on the map (a click on it).
  function occupancy(f) {
    const inside = Object.keys(state.devices).filter((id) => state.devices[id].inside.includes(f.id)).sort();
    let html = "<b>" + esc(f.properties.name || f.id) + "</b>" + (f.properties.name ? " " + esc(f.id) : "") +
      "<br>" + plural(inside.length, "device") + " inside";
    if (inside.length) {
      html += ": " + inside.slice(0, 50).map((id) => '<a href="' + esc(link(id)) + '">' + esc(id) + "</a>").join(", ") +
        (inside.length > 50 ? ", …" : "");
    }
    return html;
  }

  function setFences(fc) {
    state.fences = fc;
    if (state.fenceLayer) state.fenceLayer.remove();
    state.fenceLayer = L.geoJSON(fc, {
      style: { color: "#5c6bc0", weight: 2, fillOpacity: 0.12 },
      pointToLayer: (f, ll) => L.circle(ll, { radius: f.properties.radius }),
      onEachFeature: (f, layer) => {
        layer.bindTooltip(esc(f.properties.name || f.id), { sticky: true });
        layer.bindPopup(() => occupancy(f));
      },
    }).addTo(map);
    const sel = $("#filter-fence"), cur = sel.value;
    sel.length = 1;
    for (const f of fc.features) sel.add(new Option(f.properties.name ? f.id + " (" + f.properties.name + ")" : f.id, f.id));
    sel.value = cur;
    if (fc.features.length && !state.fitted) { map.fitBounds(state.fenceLayer.getBounds(), { maxZoom: 15 }); state.fitted = true; }
  }

  function setDevices(list) {
    state.ticks++;
    const now = Date.now(), seen = {};
    const permanent = list.length <= labelMax;
    for (const d of list) {
      seen[d.id] = true;
      state.devices[d.id] = d;
      let m = state.markers[d.id];
      if (!m) {
        m = state.markers[d.id] = L.circleMarker([d.lat, d.lon], { radius: 6, weight: 2 });
        m.on("click", () => show(d.id));
      }
      const color = d.inside.length ? "#2e7d32" : "#546e7a";
      m.setStyle({ color, fillColor: color, fillOpacity: 0.7 });
      const label = esc(d.id) + (d.inside.length ? " <small>" + esc(d.inside.join(", ")) + "</small>" : "");
      if (m.label !== label || m.permanent !== permanent) {
        m.unbindTooltip().bindTooltip(label, { permanent, direction: "right", offset: [6, 0], className: "label" });
        m.label = label; m.permanent = permanent;
      }
      const trail = state.trail[d.id] || (state.trail[d.id] = []), last = trail[trail.length - 1];
      if (last && last.lat === d.lat && last.lon === d.lon) last.t = now; // when it was last there
      else trail.push({ lat: d.lat, lon: d.lon, t: now });
      while (trail.length > trackPoints || (trail.length > 1 && now - trail[0].t > trackSpan)) trail.shift();
      let tr = state.tracks[d.id];
      if (trail.length < 2) {
        if (tr) { tr.remove(); delete state.tracks[d.id]; }
      } else if (!tr) {
        tr = state.tracks[d.id] = L.polyline(trail, { pane: "tracks", className: "track", color: "#ef6c00", weight: 3, opacity: 0.6, interactive: false });
      } else {
        tr.setLatLngs(trail);
      }
    }
    // Gone: evicted by the engine (idle outside every fence), or no
    // longer among the most recently heard.
    for (const id in state.markers) {
      if (seen[id]) continue;
      state.markers[id].remove();
      if (state.tracks[id]) state.tracks[id].remove();
      delete state.markers[id]; delete state.tracks[id]; delete state.trail[id]; delete state.devices[id];
    }
    for (const id in state.trail) if (!seen[id]) delete state.trail[id];
    if (state.fenceLayer) state.fenceLayer.eachLayer((l) => { if (l.isPopupOpen()) l.getPopup().update(); });
    renderDevices();
    const key = Object.keys(seen).sort().join("\n");
    if (key !== state.fleetKey) { state.fleetKey = key; refreshFleet(); } // the fleet view counts what the table lists
  }

  function renderDevices() {
    const tb = $("#devices tbody");
    tb.replaceChildren();
    const ids = Object.keys(state.devices).sort();
    $("#n-devices").textContent = ids.length;
    for (const id of ids) {
      const d = state.devices[id], ok = shown(id, d.inside), m = state.markers[id], tr = state.tracks[id];
      if (ok !== map.hasLayer(m)) {
        if (ok) { m.addTo(map); if (tr) tr.addTo(map); } else { m.remove(); if (tr) tr.remove(); }
      } else if (ok && tr && !map.hasLayer(tr)) {
        tr.addTo(map);
      }
      if (!ok) continue;
      const row = tb.insertRow();
      row.dataset.device = id; row.dataset.lat = d.lat; row.dataset.lon = d.lon; row.dataset.inside = d.inside.join(",");
      const a = document.createElement("a");
      a.href = link(id); a.textContent = id; a.title = "this device's panel (a link to share)";
      cell(row, "id").append(a);
      cell(row, "pos").textContent = d.lat.toFixed(5) + ", " + d.lon.toFixed(5);
      cell(row, "id").textContent = d.inside.join(", ") || "–";
      cell(row, "num").textContent = (d.lag_ms / 1000).toFixed(1) + " s";
      row.onclick = (e) => { if (e.target !== a) show(id); };
    }
    spread();
  }

  // Devices at one spot (within spreadPx) are drawn around it, on a
  // golden-angle spiral, each with a leg to the true position.
  function spread() {
    legs.clearLayers();
    const groups = new Map();
    for (const id of Object.keys(state.markers).sort()) {
      const d = state.devices[id];
      if (!map.hasLayer(state.markers[id])) continue;
      const p = map.latLngToLayerPoint([d.lat, d.lon]);
      const k = Math.round(p.x / spreadPx) + "," + Math.round(p.y / spreadPx);
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(id);
    }
    for (const ids of groups.values()) {
      const d0 = state.devices[ids[0]];
      if (ids.length === 1) { state.markers[ids[0]].setLatLng([d0.lat, d0.lon]); continue; }
      const c = map.latLngToLayerPoint([d0.lat, d0.lon]);
      ids.forEach((id, i) => {
        const d = state.devices[id], r = 14 * Math.sqrt(i + 1), a = i * 2.39996;
        const at = map.layerPointToLatLng(c.add([r * Math.cos(a), r * Math.sin(a)]));
        state.markers[id].setLatLng(at);
        L.polyline([[d.lat, d.lon], at], { pane: "tracks", className: "leg", color: "#37474f", weight: 1, interactive: false }).addTo(legs);
      });
    }
  }
  map.on("zoomend", spread);

  // What a transition's flags mean, said plainly: [label, kind, explanation].
  function tagsOf(t) {
    const out = [];
    if (t.historic) out.push(["historic", "info", "revealed by late pings after newer ones had decided the current state: it happened, in the past, and changes nothing now"]);
    if (t.reversal) {
      out.push(t.type === "EXIT"
        ? ["one-ping visit", "neutral", "this EXIT follows the ENTER of the device's previous ping: it was inside for one ping. Real when it passed through; many of them point at GPS noise at an edge (the reversal rate, docs/runbook.md)"]
        : ["back after one ping", "neutral", "this ENTER follows the EXIT of the device's previous ping: it was outside for one ping. Real when it did leave; many of them point at GPS noise at an edge (the reversal rate, docs/runbook.md)"]);
    }
    if (t.timer) out.push(["timer", "neutral", "a DWELL fired by the device's estimated clock while it was silent"]);
    if (t.clamped) out.push([t.clamp_reason ? "clamped: " + t.clamp_reason : "clamped", "warn", "the device's stamp was implausible; the event time is the device's clock as the server models it (docs/clock.md)"]);
    return out;
  }

  function addTransition(t, live) {
    if (live) {
      state.counts.transitions++;
      if (t.historic) state.counts.historic++;
    }
    const tb = $("#transitions tbody");
    const tr = document.createElement("tr");
    tr.className = "transition " + t.type + (t.historic ? " historic" : "");
    tr.dataset.device = t.device; tr.dataset.fence = t.fence; tr.dataset.type = t.type;
    tr.dataset.historic = t.historic ? "true" : "false"; tr.dataset.ts = t.ts;
    tr.dataset.shown = Date.now(); // when it appeared, for the latency the tests check
    const when = tr.insertCell();
    when.textContent = localTime(t.event_time); when.title = t.event_time + " (UTC)";
    cell(tr, "type").textContent = t.type;
    cell(tr, "id").textContent = t.fence;
    const dev = cell(tr, "id"), a = document.createElement("a");
    a.href = link(t.device); a.textContent = t.device; dev.append(a);
    const tags = tr.insertCell();
    for (const [label, kind, why] of tagsOf(t)) {
      const s = document.createElement("span");
      s.className = "tag " + kind; s.textContent = label; s.title = why;
      tags.append(s);
    }
    if (t.reason) tags.append(" " + t.reason);
    filterRow(tr);
    tb.prepend(tr);
    while (tb.rows.length > 500) tb.deleteRow(-1);
    renderCounts();
  }

  function filterRow(tr) {
    const f = fenceFilter(), d = deviceFilter();
    tr.classList.toggle("hidden", !!(f && tr.dataset.fence !== f) || !!(d && !tr.dataset.device.includes(d)));
  }

  function renderCounts() {
    for (const k in state.counts) $("#n-" + k).textContent = state.counts[k];
  }

  function applyFilters() {
    for (const tr of $("#transitions tbody").rows) filterRow(tr);
    renderDevices();
  }
  $("#filter-fence").onchange = applyFilters;
  $("#filter-device").oninput = applyFilters;

  // One device's engine state, refreshed while the panel is open. Its
  // URL is the page's with #device=<id>.
  function openPanel(id) {
    state.panel = id;
    $("#panel").hidden = false;
    $("#panel-device").textContent = id;
    $("#panel-link").href = link(id);
    clearInterval(state.panelTimer);
    refreshPanel();
    state.panelTimer = setInterval(refreshPanel, 2000);
    $("#panel").scrollIntoView({ block: "nearest" });
  }
  function fromHash() {
    const m = /^#device=(.+)$/.exec(location.hash);
    if (m) openPanel(decodeURIComponent(m[1]));
  }
  window.addEventListener("hashchange", fromHash);
  $("#panel-close").onclick = () => {
    state.panel = null; clearInterval(state.panelTimer); $("#panel").hidden = true;
    history.replaceState(null, "", location.pathname + location.search);
  };

  const rows = (sel, items, cells) => {
    const tb = $(sel + " tbody");
    tb.replaceChildren();
    for (const it of items) { const tr = tb.insertRow(); cells(it).forEach((c, i) => { cell(tr, i ? "" : "id").textContent = c; }); }
  };
  const t = localTime;

  async function refreshPanel() {
    const id = state.panel;
    if (!id) return;
    let r, v;
    try {
      r = await fetch("api/devices/" + encodeURIComponent(id) + "?missing=200");
      v = r.ok ? await r.json() : { missing: await r.text() };
    } catch { return; } // the server is going away; the event stream says so
    if (id !== state.panel) return;
    if (v.missing) {
      $("#panel-figures").textContent = v.missing;
      for (const s of ["#panel-fences", "#panel-pending", "#panel-history", "#panel-received", "#panel-transitions"]) rows(s, [], () => []);
      return;
    }
    const fig = {
      "clock offset": (v.clock_offset_ms / 1000).toFixed(3) + " s (" + v.clock_state + ")",
      "watermark lag": (v.watermark_lag_ms / 1000).toFixed(3) + " s",
      "watermark": t(v.watermark),
      "buffer": v.buffered + " / " + v.buffer_cap + (v.deferred ? ", " + v.deferred + " late waiting" : ""),
      "hold": v.hold_ms + " ms",
      "late": v.late + " (" + v.late_per_min.toFixed(2) + "/min)",
      "evaluated pings": v.evaluated,
      "last ping arrived": t(v.last_arrival),
      "position": v.position ? v.position.map((x) => x.toFixed(5)).join(", ") : "–",
    };
    const dl = $("#panel-figures");
    dl.replaceChildren();
    for (const k in fig) {
      const dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = k; dd.textContent = fig[k]; dd.dataset.key = k; dl.append(dt, dd);
    }
    rows("#panel-fences", v.fences, (f) => [f.fence, f.inside ? "inside" : "outside", f.inside ? "since " + t(f.since) : "", f.dwelled ? "dwelled" : ""]);
    rows("#panel-pending", v.pending, (p) => [t(p.event_time), "in " + t(p.ingest_time), p.clamped ? "clamped: " + p.clamp_reason : ""]);
    rows("#panel-history", v.history.slice().reverse(), (p) => [t(p.event_time), "in " + t(p.ingest_time), p.lat.toFixed(5) + ", " + p.lon.toFixed(5)]);
    rows("#panel-received", v.received.slice().reverse(), (p) => [t(p.event_time), "in " + t(p.ingest_time), p.clamped ? "clamped: " + p.clamp_reason : "stamp as sent"]);
    rows("#panel-transitions", v.transitions.slice().reverse(), (x) => [t(x.event_time), x.type, x.fence, x.historic ? "historic" : ""]);
  }

  // The fleet view: every 10 s, and whenever the devices on the map
  // change, so that it never counts other devices than the table lists
  // for longer than a tick.
  async function refreshFleet() {
    if (state.fleetBusy) { state.fleetAgain = true; return; }
    state.fleetBusy = true;
    try {
      const r = await fetch("api/fleet");
      if (r.ok) renderFleet(await r.json());
    } catch { /* the server is going away; the event stream says so */ }
    state.fleetBusy = false;
    if (state.fleetAgain) { state.fleetAgain = false; refreshFleet(); }
  }
  function renderFleet(f) {
    const box = $("#fleet");
    box.replaceChildren();
    const p = document.createElement("p"), listed = Object.keys(state.devices).length;
    p.textContent = plural(f.devices, "device") + (f.devices !== listed ? " (" + listed + " on the map)" : "") +
      " · as of " + localTime(new Date().toISOString()).slice(11, 19);
    box.append(p);
    for (const [key, title, fmt] of [
      ["by_lag", "largest watermark lag", (r) => (r.watermark_lag_ms / 1000).toFixed(1) + " s"],
      ["by_offset", "largest clock offset", (r) => (r.clock_offset_ms / 1000).toFixed(1) + " s " + r.clock_state],
      ["by_late", "most late pings", (r) => r.late_per_min.toFixed(2) + "/min (" + r.late + ")"],
    ]) {
      const h = document.createElement("h3"); h.textContent = title; box.append(h);
      const tb = document.createElement("table"); tb.id = "fleet-" + key; box.append(tb);
      for (const r of f[key]) {
        const tr = tb.insertRow(); tr.dataset.device = r.device;
        cell(tr, "id").textContent = r.device; cell(tr, "num").textContent = fmt(r);
        tr.onclick = () => show(r.device);
      }
    }
  }
  $("#fleet-refresh").onclick = refreshFleet;
  setInterval(refreshFleet, 10000);

  const es = new EventSource("events");
  es.onopen = () => { $("#status").textContent = "live"; $("#status").className = "status live"; };
  es.onerror = () => { $("#status").textContent = "reconnecting…"; $("#status").className = "status down"; };
  es.addEventListener("fences", (e) => setFences(JSON.parse(e.data)));
  es.addEventListener("tracks", (e) => {
    const all = JSON.parse(e.data);
    for (const id in all) state.trail[id] = all[id].map(([lat, lon, t]) => ({ lat, lon, t }));
  });
  es.addEventListener("devices", (e) => setDevices(JSON.parse(e.data) || []));
  es.addEventListener("totals", (e) => {
    // A (re)connect: the server's totals since it started.
    state.counts = JSON.parse(e.data);
    renderCounts();
  });
  es.addEventListener("recent", (e) => {
    $("#transitions tbody").replaceChildren();
    for (const t of JSON.parse(e.data)) addTransition(t, false);
  });
  es.addEventListener("transition", (e) => addTransition(JSON.parse(e.data), true));
  es.addEventListener("late", () => { state.counts.late++; renderCounts(); });
  es.addEventListener("reject", () => { state.counts.rejected++; renderCounts(); });
  fromHash();
})();
