import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NotesServerKit
import Testing

/// `GET /metrics` over real HTTP.
@Suite struct MetricsTests {
    /// The LMDBRealm figures, the commit histogram, the open streams and the request counters.
    @Test func realmFigures() async throws {
        try await TestServer.run(.lmdbrealm) { server async throws in
            _ = try await server.create("inbox", "one")
            _ = try await server.create("inbox", "two")
            let text = try await metrics(server)
            for gauge in ["file_size_bytes", "used_size_bytes", "map_size_bytes", "current_version"] {
                #expect(try #require(value(of: "notes_store_\(gauge)", in: text)) > 0, "\(gauge)")
            }
            #expect(value(of: "notes_store_readers", in: text) != nil)
            #expect(try #require(value(of: "notes_store_pinned_versions", in: text)) >= 0)
            #expect(value(of: "notes_commit_duration_seconds_count", in: text) == 2)
            #expect(value(of: "notes_event_streams", in: text) == 0)
            #expect(text.contains("hb_requests"))
        }
    }

    /// GRDB has a file size and the bytes in use; the LMDB figures are absent.
    @Test func grdbFigures() async throws {
        try await TestServer.run(.grdb) { server async throws in
            _ = try await server.create("inbox", "one")
            let text = try await metrics(server)
            #expect(try #require(value(of: "notes_store_file_size_bytes", in: text)) > 0)
            #expect(try #require(value(of: "notes_store_used_size_bytes", in: text)) > 0)
            #expect(value(of: "notes_commit_duration_seconds_count", in: text) == 1)
        }
    }

    private func metrics(_ server: TestServer) async throws -> String {
        let response = try await server.send(.GET, "/metrics")
        #expect(response.status == .ok)
        return String(buffer: response.body)
    }

    /// The value of the unlabelled sample `name` in a Prometheus text.
    private func value(of name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }
}
