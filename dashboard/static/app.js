// The live page: fences and devices on a map, transitions as they are
// published, one device's engine state and the fleet's misbehaving list.
// Data: GET /api/* and the server-sent events of GET /events.
"use strict";
(function () {
  const $ = (s) => document.querySelector(s);
  // Leaflet tooltips are HTML; device ids and fence names are not.
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
  const state = {
    fences: null, fenceLayer: null, markers: {}, devices: {},
    counts: { transitions: 0, historic: 0, late: 0, rejected: 0 },
    panel: null, panelTimer: null,
  };
  window.edgefence = state; // for the browser tests and the curious

  const map = L.map("map", { preferCanvas: false }).setView([52.52, 13.40], 12);
  fetch("api/config").then((r) => r.json()).then((c) => {
    if (c.tiles) L.tileLayer(c.tiles, { maxZoom: 19, attribution: "tiles: " + new URL(c.tiles.replace(/[{}]/g, "")).host }).addTo(map);
  });

  const fenceFilter = () => $("#filter-fence").value;
  const deviceFilter = () => $("#filter-device").value.trim();
  const shown = (device, fences) => {
    const d = deviceFilter(), f = fenceFilter();
    return (!d || device.includes(d)) && (!f || fences.includes(f));
  };

  function setFences(fc) {
    state.fences = fc;
    if (state.fenceLayer) state.fenceLayer.remove();
    state.fenceLayer = L.geoJSON(fc, {
      style: { color: "#5c6bc0", weight: 2, fillOpacity: 0.12 },
      pointToLayer: (f, ll) => L.circle(ll, { radius: f.properties.radius }),
      onEachFeature: (f, layer) => layer.bindTooltip(esc(f.properties.name || f.id)),
    }).addTo(map);
    const sel = $("#filter-fence"), cur = sel.value;
    sel.length = 1;
    for (const f of fc.features) sel.add(new Option(f.properties.name ? f.id + " (" + f.properties.name + ")" : f.id, f.id));
    sel.value = cur;
    if (fc.features.length && !state.fitted) { map.fitBounds(state.fenceLayer.getBounds(), { maxZoom: 15 }); state.fitted = true; }
  }

  function setDevices(list) {
    const seen = {};
    for (const d of list) {
      seen[d.id] = true;
      state.devices[d.id] = d;
      let m = state.markers[d.id];
      const color = d.inside.length ? "#2e7d32" : "#546e7a";
      if (!m) {
        m = state.markers[d.id] = L.circleMarker([d.lat, d.lon], { radius: 6, weight: 2 }).addTo(map);
        m.on("click", () => openPanel(d.id));
      }
      m.setLatLng([d.lat, d.lon]).setStyle({ color, fillColor: color, fillOpacity: 0.7 });
      m.bindTooltip(esc(d.id + (d.inside.length ? " in " + d.inside.join(", ") : "")));
    }
    for (const id in state.markers) if (!seen[id]) { state.markers[id].remove(); delete state.markers[id]; delete state.devices[id]; }
    renderDevices();
  }

  function renderDevices() {
    const tb = $("#devices tbody");
    tb.replaceChildren();
    for (const id of Object.keys(state.devices).sort()) {
      const d = state.devices[id], ok = shown(id, d.inside);
      const m = state.markers[id];
      if (m) m.setStyle({ opacity: ok ? 1 : 0, fillOpacity: ok ? 0.7 : 0 });
      if (!ok) continue;
      const tr = tb.insertRow();
      tr.dataset.device = id; tr.dataset.lat = d.lat; tr.dataset.lon = d.lon; tr.dataset.inside = d.inside.join(",");
      tr.insertCell().textContent = id;
      tr.insertCell().textContent = d.lat.toFixed(5) + ", " + d.lon.toFixed(5);
      tr.insertCell().textContent = d.inside.join(", ") || "–";
      tr.insertCell().textContent = (d.lag_ms / 1000).toFixed(1) + " s";
      tr.onclick = () => openPanel(id);
    }
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
    tr.insertCell().textContent = t.event_time.replace("T", " ").replace("Z", "");
    const ty = tr.insertCell(); ty.className = "type"; ty.textContent = t.type;
    tr.insertCell().textContent = t.fence;
    tr.insertCell().textContent = t.device;
    const tags = tr.insertCell();
    for (const [k, label] of [["historic", "historic"], ["reversal", "reversal"], ["timer", "timer"], ["clamped", t.clamp_reason ? "clamped: " + t.clamp_reason : "clamped"]]) {
      if (t[k]) { const s = document.createElement("span"); s.className = "tag"; s.textContent = label; tags.append(s); }
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

  // One device's engine state, refreshed while the panel is open.
  function openPanel(id) {
    state.panel = id;
    $("#panel").hidden = false;
    $("#panel-device").textContent = id;
    clearInterval(state.panelTimer);
    refreshPanel();
    state.panelTimer = setInterval(refreshPanel, 2000);
  }
  $("#panel-close").onclick = () => { state.panel = null; clearInterval(state.panelTimer); $("#panel").hidden = true; };

  const rows = (sel, items, cells) => {
    const tb = $(sel + " tbody");
    tb.replaceChildren();
    for (const it of items) { const tr = tb.insertRow(); for (const c of cells(it)) tr.insertCell().textContent = c; }
  };
  const t = (s) => (s ? s.replace("T", " ").replace("Z", "") : "–");

  async function refreshPanel() {
    const id = state.panel;
    if (!id) return;
    const r = await fetch("api/devices/" + encodeURIComponent(id));
    if (id !== state.panel) return;
    if (!r.ok) { $("#panel-figures").textContent = await r.text(); return; }
    const v = await r.json();
    const fig = {
      "clock offset": (v.clock_offset_ms / 1000).toFixed(3) + " s (" + v.clock_state + ")",
      "watermark lag": (v.watermark_lag_ms / 1000).toFixed(3) + " s",
      "watermark": t(v.watermark),
      "buffer": v.buffered + " / " + v.buffer_cap + (v.deferred ? ", " + v.deferred + " late waiting" : ""),
      "hold": v.hold_ms + " ms",
      "late": v.late + " (" + v.late_per_min.toFixed(2) + "/min)",
      "evaluated pings": v.evaluated,
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

  async function refreshFleet() {
    const f = await (await fetch("api/fleet")).json();
    const box = $("#fleet");
    box.replaceChildren();
    const p = document.createElement("p");
    p.textContent = f.devices + " devices";
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
        tr.insertCell().textContent = r.device; tr.insertCell().textContent = fmt(r);
        tr.onclick = () => openPanel(r.device);
      }
    }
  }
  $("#fleet-refresh").onclick = refreshFleet;
  refreshFleet();
  setInterval(refreshFleet, 10000);

  const es = new EventSource("events");
  es.onopen = () => { $("#status").textContent = "live"; $("#status").className = "status live"; };
  es.onerror = () => { $("#status").textContent = "reconnecting…"; $("#status").className = "status down"; };
  es.addEventListener("fences", (e) => setFences(JSON.parse(e.data)));
  es.addEventListener("devices", (e) => setDevices(JSON.parse(e.data)));
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
})();
