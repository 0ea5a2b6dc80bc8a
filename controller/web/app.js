// sdnmpi live web view: polls /sdnmpi/view once a second and draws the fabric in tiers (hosts under
// their leaves), links coloured by utilisation, the jobs, the selected job's routes per Allreduce
// step and its Bcast trees, and the counters. Plain JavaScript and SVG; no library, no build step.
"use strict";
(function () {
  const POLL_MS = 1000;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const COL = 58, TIER_GAP = 110, TOP = 36, HOST_GAP = 88, MARGIN = 40;
  const IDLE = "#9aa5b1";

  const state = {
    shape: "", links: {}, ends: {}, switches: {}, hosts: {},
    selected: null, detail: null, detailShape: "", jobsShape: "", mode: {kind: "all"},
  };
  const $ = (id) => document.getElementById(id);

  function make(tag, attrs, parent, ns) {
    const node = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v; else node.setAttribute(k, v);
    }
    if (parent) parent.appendChild(node);
    return node;
  }
  const svg = (tag, attrs, parent) => make(tag, attrs, parent, SVG_NS);

  async function getJson(path) {
    const resp = await fetch(path, {cache: "no-store"});
    if (!resp.ok) throw new Error(path + ": HTTP " + resp.status);
    return resp.json();
  }

  function rate(bps) {
    const units = [["Gbit/s", 1e9], ["Mbit/s", 1e6], ["kbit/s", 1e3]];
    for (const [unit, scale] of units) if (bps >= scale) return (bps / scale).toFixed(1) + " " + unit;
    return Math.round(bps) + " bit/s";
  }

  function colour(util) {
    if (util === null || util === undefined || util < 0.02) return IDLE;
    return "hsl(" + Math.round(120 * (1 - Math.min(util, 1))) + ",72%,42%)";
  }

  const endId = (e) => e.host !== undefined ? e.host : e.dpid + ":" + e.port;
  const shortDpid = (dpid) => dpid.replace(/^0+(?=.)/, "");

  // ---- layout and drawing ---------------------------------------------------------------------
  function layout(view) {
    const tiers = {};
    for (const s of view.switches) (tiers[s.tier] = tiers[s.tier] || []).push(s);
    const top = Math.max(0, ...Object.keys(tiers).map(Number));
    const hostsOf = {};
    for (const h of view.hosts) (hostsOf[h.dpid] = hostsOf[h.dpid] || []).push(h);
    const leaves = (tiers[0] || []).slice().sort((a, b) => a.dpid.localeCompare(b.dpid));
    const slots = leaves.reduce((n, s) => n + Math.max(1, (hostsOf[s.dpid] || []).length), 0);
    const width = Math.max(640, slots * COL + 2 * MARGIN);
    const y = (tier) => TOP + (top - tier) * TIER_GAP;
    const hostY = y(0) + HOST_GAP;
    const pos = {};
    let x = MARGIN + (width - 2 * MARGIN - slots * COL) / 2;
    for (const leaf of leaves) {
      const hs = (hostsOf[leaf.dpid] || []).slice().sort((a, b) => a.port - b.port);
      hs.forEach((h, i) => { pos[h.mac] = {x: x + COL * (i + 0.5), y: hostY}; });
      const n = Math.max(1, hs.length);
      pos[leaf.dpid] = {x: x + COL * n / 2, y: y(0)};
      x += COL * n;
    }
    for (let t = 1; t <= top; t++) {
      const row = (tiers[t] || []).slice().sort((a, b) => a.dpid.localeCompare(b.dpid));
      row.forEach((s, i) => { pos[s.dpid] = {x: MARGIN + (width - 2 * MARGIN) * (i + 0.5) / row.length, y: y(t)}; });
    }
    return {pos, width, height: hostY + 48};
  }

  function shapeOf(view) {
    return JSON.stringify([view.switches.map((s) => [s.dpid, s.tier]), view.hosts.map((h) => [h.mac, h.dpid, h.port, h.name]),
                           view.links.map((l) => l.id)]);
  }

  function draw(view) {
    const root = $("fabric");
    const {pos, width, height} = layout(view);
    root.setAttribute("viewBox", "0 0 " + width + " " + height);
    root.replaceChildren();
    const halos = svg("g", {id: "halos"}, root);
    const linkLayer = svg("g", {class: "links"}, root);
    const switchLayer = svg("g", {class: "switches"}, root);
    const hostLayer = svg("g", {class: "hosts"}, root);
    state.links = {}; state.ends = {}; state.switches = {}; state.hosts = {}; state.halos = halos;
    for (const link of view.links) {
      const a = pos[link.a.dpid], b = pos[link.kind === "host" ? link.b.host : link.b.dpid];
      if (!a || !b) continue;
      const line = svg("line", {class: "link", "data-link": link.id, "data-kind": link.kind, "data-a": endId(link.a),
                                "data-b": endId(link.b), x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: IDLE}, linkLayer);
      const title = svg("title", {}, line);
      state.links[link.id] = {line, title, a, b};
      state.ends[endId(link.a)] = link.id;
      if (link.kind === "fabric") state.ends[endId(link.b)] = link.id;
    }
    for (const s of view.switches) {
      const p = pos[s.dpid];
      if (!p) continue;
      const g = svg("g", {class: "switch tier" + s.tier, "data-dpid": s.dpid, transform: "translate(" + p.x + "," + p.y + ")"}, switchLayer);
      svg("rect", {x: -26, y: -12, width: 52, height: 24, rx: 4}, g);
      svg("text", {y: 4, text: shortDpid(s.dpid)}, g);
      state.switches[s.dpid] = svg("title", {}, g);
    }
    // Hosts by name, unless the names do not tell them apart (e.g. emulated hosts share one hostname).
    const names = view.hosts.map((h) => h.name);
    const byName = names.every((n) => n) && new Set(names).size === names.length;
    for (const h of view.hosts) {
      const p = pos[h.mac];
      if (!p) continue;  // a host without an IP address on a switch that is no leaf: not drawn
      const g = svg("g", {class: "host", "data-mac": h.mac, "data-ip": h.ip || "", transform: "translate(" + p.x + "," + p.y + ")"}, hostLayer);
      svg("circle", {r: 11}, g);
      svg("text", {y: 26, text: byName ? h.name : h.ip || h.mac.slice(-8)}, g);
      svg("title", {text: (h.name ? h.name + " " : "") + (h.ip || "no IP") + " " + h.mac + " at " + h.dpid + ":" + h.port}, g);
      if (h.ip) state.hosts[h.ip] = {g, rank: svg("text", {class: "rank", y: 40}, g)};
    }
  }

  function update(view) {
    for (const link of view.links) {
      const entry = state.links[link.id];
      if (!entry) continue;
      entry.line.setAttribute("stroke", colour(link.utilization));
      entry.line.setAttribute("data-util", link.utilization === null ? "" : link.utilization.toFixed(3));
      entry.title.textContent = endId(link.a) + " \u2192 " + endId(link.b) + ": " + rate(link.bps[0]) + "\n" +
        endId(link.b) + " \u2192 " + endId(link.a) + ": " + rate(link.bps[1]) +
        (link.utilization === null ? "\ncapacity unknown" : "\nutilisation " + (100 * link.utilization).toFixed(1) + "%");
    }
    for (const s of view.switches) {
      const title = state.switches[s.dpid];
      if (title) title.textContent = s.dpid + " (tier " + s.tier + "): " + (s.flows === null ? "?" : s.flows) +
        " flows, " + (s.groups === null ? "?" : s.groups) + " groups";
    }
  }

  // ---- side panel ------------------------------------------------------------------------------
  function renderSummary(view) {
    const fabricLinks = view.links.filter((l) => l.kind === "fabric").length;
    $("summary").textContent = view.switches.length + " switches \u00b7 " + fabricLinks + " links \u00b7 " +
      view.hosts.length + " hosts \u00b7 " + view.jobs.length + " jobs";
    $("routing").textContent = "routing: " + view.routing;
    $("job-count").textContent = "(" + view.jobs.length + ")";
    const c = view.counters, r = c.rpc;
    const rows = [["routing policy", view.routing], ["jobs active", view.jobs.length], ["jobs registered", r.jobs_registered],
                  ["RPC requests", r.requests], ["RPC errors", r.errors], ["Allreduce plans", r.allreduce_plans],
                  ["Bcast trees", r.bcast_trees], ["packet-ins", c.packet_in.total], ["ARP replies", c.arp_replies],
                  ["route recomputes", c.route_recomputes], ["OpenFlow errors", c.switch_errors],
                  ["handler errors", c.handler_errors]];
    const table = $("counters");
    table.replaceChildren();
    for (const [name, value] of rows) {
      const tr = make("tr", {"data-counter": name}, table);
      make("td", {text: name}, tr);
      make("td", {class: "num", text: String(value)}, tr);
    }
  }

  function renderJobs(view, force) {
    const shape = JSON.stringify([view.jobs, state.selected]);
    if (shape === state.jobsShape && !force) return;  // rebuilt only on change, so clicks are never lost
    state.jobsShape = shape;
    const list = $("jobs");
    list.replaceChildren();
    if (!view.jobs.length) make("li", {class: "muted", text: "no jobs"}, list).style.cursor = "default";
    for (const job of view.jobs) {
      const li = make("li", {"data-job": job.job, class: job.job === state.selected ? "selected" : ""}, list);
      li.textContent = "job " + job.job + ": " + job.hosts.length + " ranks on " + Object.keys(job.ranks).length +
        " hosts, " + job.comms.length + " plans, " + job.trees + " trees, " + job.flows + " flows";
      li.addEventListener("click", () => select(job.job === state.selected ? null : job.job));
    }
  }

  function select(jobId) {
    state.selected = jobId; state.detail = null; state.detailShape = ""; state.mode = {kind: "all"};
    if (lastView) renderJobs(lastView, true);
    refresh();
  }

  function button(label, mode, parent) {
    const b = make("button", {type: "button", text: label, "data-mode": JSON.stringify(mode)}, parent);
    b.addEventListener("click", () => { state.mode = mode; renderModes(); highlight(); });
    return b;
  }

  function renderModes() {
    const want = JSON.stringify(state.mode);
    for (const b of document.querySelectorAll("#job-detail button")) b.classList.toggle("on", b.dataset.mode === want);
    const d = state.detail, mode = state.mode;
    let text = "";
    if (d && mode.kind === "step" && d.comms[mode.comm] && d.comms[mode.comm].steps[mode.step]) {
      const pairs = d.comms[mode.comm].steps[mode.step];
      const routed = pairs.filter((p) => p.hops.length).length;
      text = "step " + (mode.step + 1) + ": " + pairs.length + " pairs, " + routed + " routed by the job's flows" +
        (routed < pairs.length ? ", " + (pairs.length - routed) + " within a leaf" : "");
    } else if (d && mode.kind === "tree" && d.trees[mode.index]) {
      const t = d.trees[mode.index];
      text = "tree " + t.group + ":" + t.port + " over " + Object.keys(t.switches).length + " switches, top " + (t.top || "-");
    } else if (d) {
      text = d.routes.length + " pair flows, " + d.trees.length + " Bcast trees";
    }
    $("job-mode").textContent = text;
  }

  function renderDetail() {
    const box = $("job-detail"), d = state.detail;
    box.hidden = !d;
    if (!d) { state.detailShape = ""; highlight(); return; }
    const shape = JSON.stringify([d.job, d.hosts, Object.keys(d.comms), d.trees.map((t) => [t.comm, t.root, t.group])]);
    if (shape !== state.detailShape) {
      state.detailShape = shape;
      $("job-title").textContent = "Job " + d.job + " (" + d.hosts.length + " ranks, lease " + d.lease_s + " s)";
      const hosts = $("job-hosts");
      hosts.replaceChildren();
      for (const [ip, ranks] of Object.entries(d.ranks)) make("div", {text: ip + ": rank " + ranks.join(", ")}, hosts);
      const steps = $("job-steps");
      steps.replaceChildren();
      button("all routes", {kind: "all"}, steps);
      for (const [comm, plan] of Object.entries(d.comms)) {
        const row = make("div", {}, steps);
        make("span", {class: "muted", text: "comm " + comm + " (" + plan.planner + ") steps: "}, row);
        plan.steps.forEach((_step, i) => button(String(i + 1), {kind: "step", comm: comm, step: i}, row));
      }
      const trees = $("job-trees");
      trees.replaceChildren();
      d.trees.forEach((t, i) => {
        const row = make("div", {}, trees);
        button("Bcast tree comm " + t.comm + " root " + t.root + " \u2192 " + t.group, {kind: "tree", index: i}, row);
      });
    }
    const plans = $("job-plans");
    plans.replaceChildren();
    for (const [comm, plan] of Object.entries(d.comms)) {
      make("div", {class: "muted", text: "comm " + comm + ": " + plan.flows + " flows, max load per step " +
        plan.max_load.join(" ") + " (lower bound " + plan.lower_bound.join(" ") + ")"}, plans);
    }
    renderModes();
    highlight();
  }

  // Switch ports (DPID:PORT) whose outgoing link the selected job uses in the current mode.
  function selectedEnds() {
    const d = state.detail, mode = state.mode, ends = [];
    if (!d) return ends;
    if (mode.kind === "all") {
      for (const r of d.routes) ends.push(r.dpid + ":" + r.port);
      for (const t of d.trees) for (const [dpid, ports] of Object.entries(t.switches)) for (const p of ports) ends.push(dpid + ":" + p);
    } else if (mode.kind === "step" && d.comms[mode.comm] && d.comms[mode.comm].steps[mode.step]) {
      for (const pair of d.comms[mode.comm].steps[mode.step]) for (const h of pair.hops) ends.push(h.dpid + ":" + h.port);
    } else if (mode.kind === "tree" && d.trees[mode.index]) {
      for (const [dpid, ports] of Object.entries(d.trees[mode.index].switches)) for (const p of ports) ends.push(dpid + ":" + p);
    }
    return Array.from(new Set(ends)).sort();
  }

  function highlight() {
    if (!state.halos) return;
    const ends = selectedEnds();
    const shape = state.shape + JSON.stringify([ends, state.detail ? state.detail.ranks : null]);
    if (shape === state.highlighted && state.halos.isConnected) return;  // unchanged: keep the elements
    state.highlighted = shape;
    state.halos.replaceChildren();
    const byLink = {};
    for (const end of ends) {
      const id = state.ends[end];
      if (id) (byLink[id] = byLink[id] || []).push(end);
    }
    for (const [id, ends] of Object.entries(byLink)) {
      const {a, b} = state.links[id];
      svg("line", {class: "halo", "data-link": id, "data-out": ends.join(" "), x1: a.x, y1: a.y, x2: b.x, y2: b.y}, state.halos);
    }
    const ranks = state.detail ? state.detail.ranks : {};
    for (const [ip, host] of Object.entries(state.hosts)) {
      const r = ranks[ip];
      host.g.classList.toggle("member", !!r);
      host.rank.textContent = r ? "r" + r.join(",") : "";
    }
  }

  // ---- polling ---------------------------------------------------------------------------------
  let lastView = null;

  function setStatus(live, why) {
    const s = $("status");
    s.className = live ? "live" : "down";
    s.textContent = live ? "live" : "reconnecting";
    s.title = live ? "updated " + new Date().toLocaleTimeString() : String(why);
    $("fabric").classList.toggle("stale", !live);
  }

  // One request brings everything, the selected job's details included, so they always agree.
  // A failed request means the controller is away ("reconnecting"); a failure to draw what came
  // back is a bug of this page and goes to the console.
  async function refresh() {
    const asked = state.selected;
    let view;
    try {
      view = await getJson("/sdnmpi/view" + (asked === null ? "" : "?job=" + asked));
    } catch (err) {
      setStatus(false, err);
      return;
    }
    setStatus(true);
    try {
      render(view, asked);
    } catch (err) {
      console.error("sdnmpi web view: cannot draw the controller's answer:", err);
    }
  }

  function render(view, asked) {
    lastView = view;
    const shape = shapeOf(view);
    if (shape !== state.shape) { state.shape = shape; draw(view); }
    update(view);
    if (asked === state.selected) {  // not an answer about a selection changed meanwhile
      if (asked !== null && !view.job) state.selected = null;  // the job is gone
      state.detail = state.selected === null ? null : view.job;
    }
    renderSummary(view);
    renderJobs(view);
    renderDetail();
  }

  async function poll() {
    await refresh();
    setTimeout(poll, POLL_MS);
  }

  poll();
})();
