#if Sync
    import Foundation
    import LMDBRealm
    import LMDBRealmSync
    import SyncTestSupport
    import TestSupport
    import Testing

    /// Clocks: commits take the later of this machine's time and PostgreSQL's, so a slow clock
    /// does not lose to writes it came after; a clock too far ahead is refused, and says so.
    @Suite struct SyncClockTests {
        @Test func aNodeWhoseClockRunsTenMinutesAheadSendsNothingStampedThereAndSaysSo() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let fast = try await Node("fast", in: dir, server: server, clockSkew: .seconds(600))
                let right = try await Node("right", in: dir, server: server)
                try await fast.write { $0.add(SyncedNote(value: ["id": "n1", "title": "from the future"])) }
                let refused = await waitForStatus(fast.client) { status in
                    guard case .refused(let reason) = status else { return false }
                    // "… is stamped 598.5 s past PostgreSQL's time": nearer as PostgreSQL's time goes on.
                    guard reason.contains("runs ahead of PostgreSQL's"), let range = reason.range(of: "stamped "),
                        let seconds = Double(reason[range.upperBound...].prefix { $0 != " " })
                    else { return false }
                    return (540...601).contains(seconds)
                }
                #expect(refused, "\(fast.client.status)")
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes") == "0")
                // It still applies what others send.
                try await right.write { $0.add(SyncedNote(value: ["id": "n2", "title": "now"])) }
                #expect(await right.waitUntilSent())
                #expect(try await fast.notes(until: { $0.contains("n2 now 0 []") }) != nil, "\(fast.client.status)")
                // A clock 30 s ahead is within the bound.
                let near = try await Node("near", in: dir, server: server, clockSkew: .seconds(30))
                try await near.write { $0.add(SyncedNote(value: ["id": "n3", "title": "soon"])) }
                #expect(await near.waitUntilSent(), "\(near.client.status)")
                await near.stop()
                await right.stop()
                await fast.stop()
            }
        }

        @Test func aNodeWhoseClockRunsTenMinutesBehindWinsOverWhatItCameAfter() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let slow = try await Node("slow", in: dir, server: server, clockSkew: .seconds(-600))
                let right = try await Node("right", in: dir, server: server)
                try await right.write { $0.add(SyncedNote(value: ["id": "n1", "title": "first"])) }
                #expect(await right.waitUntilSent())
                #expect(try await slow.notes(until: { $0 == ["n1 first 0 []"] }) != nil, "\(slow.client.status)")
                // slow stops listening (it has learned PostgreSQL's time); right writes, then slow
                // writes the same property without having seen that.
                await slow.stop()
                try await right.write { $0.object(ofType: SyncedNote.self, forPrimaryKey: "n1")!.title = "right, earlier" }
                #expect(await right.waitUntilSent())
                try await slow.write { $0.object(ofType: SyncedNote.self, forPrimaryKey: "n1")!.title = "slow, later" }
                let again = try await Node("slow", in: dir, server: server, clockSkew: .seconds(-600))
                #expect(await again.waitUntilSent(), "\(again.client.status)")
                let expected = ["n1 slow, later 0 []"]
                #expect(try await again.notes(until: { $0 == expected }) == expected, "\(again.client.status)")
                #expect(try await right.notes(until: { $0 == expected }) == expected, "\(right.client.status)")
                await again.stop()
                await right.stop()
            }
        }

        @Test func aChangeSetStampedTooFarAheadIsNotApplied() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                // A node that allows itself an hour sends a change set stamped ten minutes ahead.
                let lax = try await Node("lax", in: dir, server: server, clockSkew: .seconds(600), maximumClockSkew: .seconds(3600))
                try await lax.write { $0.add(SyncedNote(value: ["id": "n1", "title": "from the future"])) }
                #expect(await lax.waitUntilSent(), "\(lax.client.status)")
                let strict = try await Node("strict", in: dir, server: server)
                let refused = await waitForStatus(strict.client) { status in
                    guard case .refused(let reason) = status else { return false }
                    return reason.contains("node 'lax'") && reason.contains("runs ahead")
                }
                #expect(refused, "\(strict.client.status)")
                #expect(try await strict.notes(until: { _ in true }) == [])
                await strict.stop()
                await lax.stop()
            }
        }
    }
#endif
