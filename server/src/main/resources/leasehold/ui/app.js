// The dashboard's state and its reads of /ui/api; Alpine.js binds it to index.html.
// Every list is one server-side page (at most 1000 rows): nothing loads a whole table.
function dashboard() {
  const seconds = d => d ? parseFloat(d) : 0;  // protobuf JSON durations: "4.5s"
  return {
    pages: ['cluster', 'leases', 'routes', 'events', 'charts'],
    page: 'cluster',
    error: '',
    now: Date.now(),
    cluster: {},
    leaseQuery: { prefix: '', holder: '' },
    leases: { items: [], next: '', tokens: [], current: '' },
    lease: {},
    routeQuery: { prefix: '' },
    routes: {},
    services: {},
    serviceZone: '',
    partitionGroup: '',
    partitions: [],
    eventQuery: { prefix: '', types: '' },
    events: [],
    eventStatus: '',
    source: null,
    plots: [],

    start() {
      const fromHash = location.hash.slice(1);
      if (this.pages.includes(fromHash)) this.page = fromHash;
      this.refresh();
      setInterval(() => this.refresh(), 1000);
      setInterval(() => { this.now = Date.now(); }, 250);
      this.onPage();
    },

    go(p) { this.page = p; location.hash = p; this.onPage(); },

    onPage() {
      if (this.page === 'events' && !this.source) this.tail();
      if (this.page === 'routes') { this.loadRoutes(); this.loadServices(); }
      if (this.page === 'charts') this.loadRates();
      if (this.page === 'leases') this.loadLeases();
    },

    async get(path) {
      const r = await fetch('api/' + path, { headers: { Accept: 'application/json' } });
      const body = await r.json();
      if (!r.ok) throw new Error(body.error || r.status);
      return body;
    },

    async refresh() {
      try {
        this.cluster = await this.get('cluster');
        if (this.page === 'leases') await this.loadLeases();
        if (this.page === 'charts') await this.loadRates();
        this.error = '';
      } catch (e) { this.error = String(e.message || e); }
    },

    // ---- leases ----
    query(extra) {
      const q = new URLSearchParams();
      if (this.leaseQuery.prefix) q.set('prefix', this.leaseQuery.prefix);
      if (this.leaseQuery.holder) q.set('holder', this.leaseQuery.holder);
      for (const [k, v] of Object.entries(extra)) if (v) q.set(k, v);
      return q.toString();
    },
    async loadLeases() {
      const fetchedAt = Date.now();
      const page = await this.get('leases?' + this.query({ pageToken: this.leases.current, limit: 100 }));
      // The deadline the leader acts on (deadlineRemaining); remaining only from older servers.
      page.leases.forEach(l => { l.expiresLocal = fetchedAt + seconds(l.deadlineRemaining || l.remaining) * 1000; });
      this.leases.items = page.leases;
      this.leases.next = page.nextPageToken || '';
    },
    searchLeases() { this.leases.tokens = []; this.leases.current = ''; this.loadLeases().catch(e => this.error = e.message); },
    nextPage() { this.leases.tokens.push(this.leases.current); this.leases.current = this.leases.next; this.loadLeases(); },
    firstPage() { this.leases.tokens = []; this.leases.current = ''; this.loadLeases(); },
    countdown(l) {
      if (!l.remaining && !l.deadlineRemaining) return '';
      const left = Math.max(0, (l.expiresLocal - this.now) / 1000);
      // ~: an estimate by a node that could not ask the leader, which may have extended the lease.
      return (l.deadlineSource === 'DEADLINE_SOURCE_ESTIMATE' ? '~' : '') + left.toFixed(1) + 's'
        + ((l.extensions || []).length ? ' (extended)' : '');
    },
    // Why the leader moved the lease's deadline past its last renewal plus TTL, in words.
    extensionText(l) {
      if (!l) return '';
      if (l.deadlineSource === 'DEADLINE_SOURCE_ESTIMATE') return 'Its deadline is an estimate: the node could not ask the leader, which may have extended it.';
      return (l.extensions || []).map(e => 'Extended by ' + seconds(e.by).toFixed(1) + 's at ' + e.at + ': '
        + (e.reason === 'LEADER_CHANGE' ? 'leader change (term ' + (e.term || 0) + '), a full TTL from then.'
          : e.reason === 'STALL' ? 'the leader stalled, every deadline moved out by the stall.' : e.reason + '.')).join(' ');
    },
    attrs(l) {
      const a = l.attributes || {};
      const parts = [];
      if (a.address) parts.push(a.address);
      if (a.status) parts.push(a.status);
      for (const [k, v] of Object.entries(a.metadata || {})) parts.push(k + '=' + v);
      return parts.join(' ');
    },
    async openLease(name) {
      try { this.lease = await this.get('lease?name=' + encodeURIComponent(name)); } catch (e) { this.error = e.message; }
    },

    // ---- routes, services, partitions ----
    async loadRoutes() {
      const q = this.routeQuery.prefix ? '?prefix=' + encodeURIComponent(this.routeQuery.prefix) : '';
      try { this.routes = await this.get('routes' + q); } catch (e) { this.error = e.message; }
    },
    async loadServices() {
      const q = this.serviceZone ? '?zone=' + encodeURIComponent(this.serviceZone) : '';
      try { this.services = await this.get('services' + q); } catch (e) { this.error = e.message; }
    },
    async loadPartitions() {
      try { this.partitions = (await this.get('partitions?group=' + encodeURIComponent(this.partitionGroup))).partitions; }
      catch (e) { this.error = e.message; }
    },
    owners() { return [...new Set(this.partitions.filter(p => p.holder).map(p => p.holder))].sort(); },
    colour(holder) {
      if (!holder) return '#eee';
      let h = 0;
      for (const c of holder) h = (h * 31 + c.charCodeAt(0)) % 360;
      return 'hsl(' + h + ', 65%, 65%)';
    },

    // ---- events: one EventSource per tab; the node shares one watch among all tabs ----
    tail() {
      if (this.source) this.source.close();
      const q = new URLSearchParams();
      if (this.eventQuery.prefix) q.set('prefix', this.eventQuery.prefix);
      if (this.eventQuery.types) q.set('types', this.eventQuery.types);
      this.events = [];
      this.eventStatus = 'connecting';
      this.source = new EventSource('api/events?' + q.toString());
      this.source.addEventListener('ready', () => { this.eventStatus = 'live'; });
      this.source.addEventListener('dropped', () => { this.eventStatus = 'reconnecting'; });
      this.source.onmessage = m => {
        this.events.unshift(JSON.parse(m.data));
        if (this.events.length > 200) this.events.length = 200;
      };
      this.source.onerror = () => { this.eventStatus = 'reconnecting'; };
    },

    // ---- charts (uPlot) ----
    async loadRates() {
      const r = await this.get('rates');
      const series = [['acquired', 'acquisitions/s'], ['renewed', 'renewals/s'], ['expired', 'expiries/s'],
        ['lateHeartbeats', 'late heartbeats/s'], ['watchers', 'watchers'],
        ['commitMillis', 'commit latency (ms per write)'], ['applyMillis', 'apply latency (ms per entry)']];
      const box = document.getElementById('charts');
      if (this.plots.length === 0) {
        for (const [key, label] of series) {
          const opts = { title: label, width: 420, height: 180, series: [{}, { label, stroke: '#2563eb', width: 1.5 }] };
          this.plots.push(new uPlot(opts, [r.at, r[key]], box));
        }
      } else {
        series.forEach(([key], i) => this.plots[i].setData([r.at, r[key]]));
      }
    },
  };
}
