#if Sync
    import CoreMetrics
    import Foundation
    import LMDBRealm
    import LMDBRealmSync
    import MetricsTestKit
    import SyncTestSupport
    import TestSupport
    import Testing

    /// The client's swift-metrics against what happened: change sets sent and applied, how late
    /// they were applied, reconnections, refusals.
    @Suite struct SyncMetricsTests {
        @Test func theMetricsCountWhatHappened() async throws {
            let metrics = TestMetrics()
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server, metrics: metrics)
                let b = try await Node("b", in: dir, server: server, metrics: metrics)
                for i in 0..<5 { try await a.write { $0.add(SyncedNote(value: ["id": "a\(i)", "title": "t"])) } }
                #expect(await a.waitUntilSent(), "\(a.client.status)")
                let last = Int64(try server.psql("SELECT max(sequence) FROM lmdbrealm_changes")) ?? 0
                #expect(try await b.notes(appliedThrough: last)?.count == 5, "\(b.client.status)")
                // b's exchanges follow one another: once its own write is sent, the one that
                // applied a's change sets is over.
                try await b.write { $0.add(SyncedNote(value: ["id": "b0", "title": "t"])) }
                #expect(await b.waitUntilSent(), "\(b.client.status)")
                func counter(_ label: String, _ node: String) throws -> Int64 {
                    try metrics.expectCounter(label, [("node", node)]).totalValue
                }
                #expect(try counter("lmdbrealm_sync_sent_change_sets_total", "a") == 5)
                #expect(try counter("lmdbrealm_sync_sent_change_sets_total", "b") == 1)
                #expect(try counter("lmdbrealm_sync_applied_change_sets_total", "b") == 5)
                let delays = try metrics.expectTimer("lmdbrealm_sync_apply_delay", [("node", "b")]).values
                #expect(delays.count == 5 && delays.allSatisfy { $0 >= 0 && $0 < 60_000_000_000 }, "\(delays)")
                let outbox = try metrics.expectGauge("lmdbrealm_sync_outbox_change_sets", [("node", "a")]).values
                #expect(!outbox.isEmpty && outbox.allSatisfy { (0...5).contains($0) }, "\(outbox)")
                // PostgreSQL restarts: a connects again.
                #expect(try counter("lmdbrealm_sync_reconnects_total", "a") == 0)
                server.kill()
                try server.restart()
                try await a.write { $0.add(SyncedNote(value: ["id": "a5", "title": "t"])) }
                #expect(await a.waitUntilSent(), "\(a.client.status)")
                #expect(try counter("lmdbrealm_sync_reconnects_total", "a") >= 1)
                #expect(try counter("lmdbrealm_sync_sent_change_sets_total", "a") == 6)
                await a.stop()
                await b.stop()
                // A login PostgreSQL refuses (a role it does not know) is counted.
                let posing = try await Node("c", in: dir, server: server, role: ("postgres-missing", "none"), metrics: metrics)
                #expect(await waitForStatus(posing.client) { if case .cannotConnect = $0 { true } else { false } }, "\(posing.client.status)")
                #expect(try metrics.expectCounter("lmdbrealm_sync_refusals_total", [("node", "c"), ("kind", "cannotConnect")]).totalValue >= 1)
                await posing.stop()
            }
        }
    }
#endif
