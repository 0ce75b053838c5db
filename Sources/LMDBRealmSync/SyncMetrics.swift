#if Sync
    internal import CoreMetrics

    /// What a ``SyncClient`` reports through swift-metrics (to the factory the application
    /// bootstrapped, `MetricsSystem.factory`, unless told), each with the dimension `node`:
    ///
    /// - `lmdbrealm_sync_outbox_change_sets` (gauge): local change sets waiting to be sent;
    /// - `lmdbrealm_sync_sent_change_sets_total` (counter): change sets put in the shared log;
    /// - `lmdbrealm_sync_applied_change_sets_total` (counter): other nodes' change sets applied;
    /// - `lmdbrealm_sync_apply_delay` (timer): from a change set's stamp to its being applied here;
    /// - `lmdbrealm_sync_reconnects_total` (counter): connections made again after one ended or failed;
    /// - `lmdbrealm_sync_refusals_total` (counter, dimension `kind`: `cannotConnect`,
    ///   `notPermitted`, `refused`, `clockAhead`, `logWentBack`): refusals met.
    struct SyncMetrics: Sendable {
        let outbox: Gauge
        let sent: Counter
        let applied: Counter
        let applyDelay: Timer
        let reconnects: Counter
        private let factory: any MetricsFactory
        private let node: String

        init(node: String, factory: any MetricsFactory) {
            let dimensions = [("node", node)]
            self.node = node
            self.factory = factory
            outbox = Gauge(label: "lmdbrealm_sync_outbox_change_sets", dimensions: dimensions, factory: factory)
            sent = Counter(label: "lmdbrealm_sync_sent_change_sets_total", dimensions: dimensions, factory: factory)
            applied = Counter(label: "lmdbrealm_sync_applied_change_sets_total", dimensions: dimensions, factory: factory)
            applyDelay = Timer(label: "lmdbrealm_sync_apply_delay", dimensions: dimensions, factory: factory)
            reconnects = Counter(label: "lmdbrealm_sync_reconnects_total", dimensions: dimensions, factory: factory)
        }

        /// Counts a refusal of `kind`.
        func refused(_ kind: String) {
            Counter(label: "lmdbrealm_sync_refusals_total", dimensions: [("node", node), ("kind", kind)], factory: factory).increment()
        }
    }
#endif
