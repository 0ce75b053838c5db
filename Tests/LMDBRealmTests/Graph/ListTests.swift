import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

final class Tag: Object {
    @Persisted(primaryKey: true) var value: String
    @Persisted var weight = 0
}

final class Post: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var title = ""
    @Persisted var tags: List<Tag>
    @Persisted var scores: List<Double>
    @Persisted var labels: List<String?>
    @Persisted var related: List<Post>
}

// Models written as RealmSwift's documentation writes relationships: a to-one link and a list
// declared with an initial value.
final class DogToy: Object {
    @Persisted var name = ""
}

final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var breed: String?
    @Persisted var favoriteToy: DogToy?
}

final class DogOwner: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var dogs = List<Dog>()
}

func listConfiguration(_ dir: URL) -> Realm.Configuration {
    makeConfiguration(dir, types: [Post.self, Tag.self])
}

private func makePost(_ id: Int) -> Post {
    let p = Post()
    p.id = id
    return p
}

private func tag(_ value: String, _ weight: Int = 0) -> Tag {
    let t = Tag()
    t.value = value
    t.weight = weight
    return t
}

@Suite struct ListTests {
    @Test func anUnmanagedListIsAnArrayAndIsStoredWithItsObject() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let post = makePost(1)
            let swift = tag("swift", 3)
            post.tags.append(swift)
            post.tags.append(contentsOf: [tag("lmdb"), swift])  // duplicates are allowed
            post.scores.append(objectsIn: [4.5, -1, .infinity])  // RealmSwift's name
            post.labels.append(contentsOf: ["a", nil, ""])
            #expect(post.tags.count == 3 && post.tags[1].value == "lmdb")
            try realm.write { realm.add(post) }
            #expect(realm.objects(Tag.self).count == 2, "the tags were added once each")
            #expect(post.tags.count == 3)
            #expect(post.tags.map(\.value) == ["swift", "lmdb", "swift"])
            #expect(post.tags[0].weight == 3)
            #expect(post.tags.realm != nil)
            #expect(Array(post.scores) == [4.5, -1, .infinity])
            #expect(Array(post.labels) == ["a", nil, ""])
            #expect(post.objectSchema["tags"]?.isArray == true)
            #expect(post.objectSchema["tags"]?.objectClassName == "Tag")
            #expect(post.objectSchema["labels"]?.isOptional == true)
            #expect("\(post.objectSchema["labels"]!)" == "labels: List<string?>")
        }
    }

    /// A long list added with its new object is stored as appending to a managed list stores
    /// it: in order, duplicates kept, in several chunks, each target referenced (the file
    /// verifies), whether its objects were stored before or come with it.
    @Test func aLongListAddedWithItsObjectIsStoredAsAppendingStoresIt() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let stored = (0..<40).map { tag("t\($0)", $0) }
            try realm.write { for t in stored { realm.add(t) } }
            let fresh = (0..<10).map { tag("new\($0)", 100 + $0) }
            let order: [Tag] = (0..<150).map { (i: Int) -> Tag in i % 15 == 0 ? fresh[(i / 15) % 10] : stored[(i * 7) % 40] }
            let added = makePost(1)
            added.tags.append(objectsIn: order)
            let appended = makePost(2)
            try realm.write {
                realm.add(added)
                realm.add(appended)
                appended.tags.append(objectsIn: order)
            }
            let values = order.map(\.value)
            #expect(added.tags.map(\.value) == values)
            #expect(appended.tags.map(\.value) == values)
            #expect(added.tags.count == 150)
            #expect(added.tags[64].value == values[64])
            #expect(added.tags[149].value == values[149])
            #expect(realm.objects(Tag.self).count == 50)
            #expect(realm.objects(Post.self).where { $0.tags.value == "new9" }.count == 2)
            #expect(realm.objects(Post.self).where { $0.tags.weight == 39 }.count == 2)
            let report = try realm.verify()
            #expect(report.isSound, "\(report)")
            // The same stored again under an update policy goes through the general path.
            let again = makePost(1)
            again.tags.append(objectsIn: order.reversed())
            try realm.write { realm.add(again, update: .modified) }
            #expect(added.tags.map(\.value) == values.reversed())
            #expect(try realm.verify().isSound)
        }
    }

    @Test func managedListsChangeInsideWritesAndAreSeenByOtherHandles() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let post = makePost(1)
            try realm.write { realm.add(post) }
            try realm.write {
                post.tags.append(tag("a"))
                post.tags.append(tag("b"))
                post.tags.insert(tag("c"), at: 0)
                post.scores.append(contentsOf: [1, 2, 3])
                post.scores[1] = 20
                post.scores.swapAt(0, 2)
                #expect(Array(post.scores) == [3, 20, 1], "seen inside the write")
            }
            #expect(post.tags.map(\.value) == ["c", "a", "b"])
            let other = try Realm(configuration: listConfiguration(dir))
            let seen = try #require(other.object(ofType: Post.self, forPrimaryKey: 1))
            #expect(seen.tags.map(\.value) == ["c", "a", "b"])
            #expect(Array(seen.scores) == [3, 20, 1])
            try realm.write {
                post.tags.move(from: 0, to: 2)
                post.tags.remove(at: 0)
                post.scores.removeLast()
            }
            #expect(post.tags.map(\.value) == ["b", "c"])
            #expect(Array(post.scores) == [3, 20])
            other.refresh()
            #expect(seen.tags.map(\.value) == ["b", "c"])
            try realm.write { post.tags.removeAll() }
            #expect(post.tags.isEmpty)
            #expect(realm.objects(Tag.self).count == 3, "removing from a list deletes no object")
            // Assigning a list replaces the contents; `sort()` writes the same list back.
            try realm.write {
                let replacement = List<Double>()
                replacement.append(contentsOf: [9, 7, 8])
                post.scores = replacement
                post.scores.sort()
            }
            #expect(Array(post.scores) == [7, 8, 9])
        }
    }

    @Test func listsMatchSwiftArraysUnderRandomOperations() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let seed = SeededGenerator.testSeed()
            var generator = SeededGenerator(state: seed)
            let post = makePost(7)
            let tags = (0..<6).map { tag("t\($0)") }
            try realm.write {
                realm.add(post)
                for t in tags { realm.add(t) }
            }
            var scores: [Double] = []
            var tagNames: [String] = []
            for round in 0..<300 {
                try realm.write {
                    switch Int.random(in: 0..<7, using: &generator) {
                    case 0, 1:
                        let v = Double(round)
                        post.scores.append(v)
                        scores.append(v)
                        let t = tags.randomElement(using: &generator)!
                        post.tags.append(t)
                        tagNames.append(t.value)
                    case 2 where !scores.isEmpty:
                        let i = Int.random(in: 0..<scores.count, using: &generator)
                        post.scores.remove(at: i)
                        scores.remove(at: i)
                    case 3:
                        let i = Int.random(in: 0...scores.count, using: &generator)
                        post.scores.insert(-Double(round), at: i)
                        scores.insert(-Double(round), at: i)
                    case 4 where scores.count >= 2:
                        let i = Int.random(in: 0..<scores.count, using: &generator)
                        let j = Int.random(in: 0..<scores.count, using: &generator)
                        post.scores.move(from: i, to: j)
                        scores.insert(scores.remove(at: i), at: j)
                    case 5 where !tagNames.isEmpty:
                        let i = Int.random(in: 0..<tagNames.count, using: &generator)
                        post.tags.remove(at: i)
                        tagNames.remove(at: i)
                    case 6 where !scores.isEmpty:
                        let i = Int.random(in: 0..<scores.count, using: &generator)
                        post.scores[i] = 0.5
                        scores[i] = 0.5
                    default:
                        break
                    }
                }
                #expect(post.scores.count == scores.count, "seed \(seed), round \(round)")
                if round % 25 == 0 || round == 299 {
                    #expect(Array(post.scores) == scores, "seed \(seed), round \(round)")
                    #expect(post.tags.map(\.value) == tagNames, "seed \(seed), round \(round)")
                }
            }
            #expect(post.scores.last == scores.last, "seed \(seed)")
            #expect(realm.indexProblems() == [], "seed \(seed)")
            #expect(post.scores.index(of: scores.first ?? -99) == scores.firstIndex(of: scores.first ?? -99), "seed \(seed)")
        }
    }

    @Test func deletingObjectsRemovesThemFromListsAndDeletingAnOwnerRemovesItsLists() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let a = tag("a")
            let b = tag("b")
            let first = makePost(1)
            first.tags.append(contentsOf: [a, b, a, b, a])
            let second = makePost(2)
            second.tags.append(contentsOf: [b, a])
            second.related.append(first)
            first.related.append(contentsOf: [second, first])  // a cycle, and a list holding its own object
            try realm.write {
                realm.add(first)
                realm.add(second)
            }
            #expect(second.related.first?.id == 1)
            #expect(first.related.map(\.id) == [2, 1])
            try realm.write { realm.delete(a) }
            #expect(first.tags.map(\.value) == ["b", "b"], "every occurrence is removed")
            #expect(second.tags.map(\.value) == ["b"])
            try realm.write { realm.delete(first) }
            #expect(second.related.isEmpty)
            // An object stored again under the same key starts with empty lists.
            let again = makePost(1)
            try realm.write { realm.add(again) }
            #expect(again.tags.isEmpty && again.related.isEmpty)
            #expect(realm.indexProblems() == [])
            try realm.write { realm.delete(realm.objects(Tag.self)) }
            #expect(second.tags.isEmpty)
            #expect(realm.indexProblems() == [])
            try realm.write { realm.deleteAll() }
            #expect(realm.objects(Post.self).isEmpty)
        }
    }

    @Test func addingWithAnUpdatePolicyReplacesTheStoredLists() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let post = makePost(1)
            post.scores.append(contentsOf: [1, 2, 3])
            try realm.write { realm.add(post) }
            let newer = makePost(1)
            newer.scores.append(9)
            try realm.write { realm.add(newer, update: .modified) }
            #expect(Array(realm.object(ofType: Post.self, forPrimaryKey: 1)!.scores) == [9])
        }
    }

    /// Lists are stored in chunks (up to 64 elements or about 1 KiB each): random appends,
    /// inserts, removals and replacements of values of every size, nulls and empty strings
    /// among them, keep a long list equal to a Swift array, read whole and by index.
    @Test func chunkedListsMatchSwiftArraysAcrossChunkBoundaries() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let post = makePost(3)
            try realm.write { realm.add(post) }
            var model: [String?] = []
            let seed: UInt64 = 23
            var rng = SeededGenerator(state: seed)
            func value() -> String? {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: return nil
                case 1: return ""
                case 2: return String(repeating: "x", count: Int.random(in: 200...1500, using: &rng))
                default: return "v\(Int.random(in: 0..<1000, using: &rng))"
                }
            }
            for step in 0..<400 {
                try realm.write {
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0...3:
                        let v = value()
                        post.labels.append(v)
                        model.append(v)
                    case 4:
                        let more = (0..<Int.random(in: 1...80, using: &rng)).map { _ in value() }
                        post.labels.append(objectsIn: more)
                        model.append(contentsOf: more)
                    case 5:
                        let i = Int.random(in: 0...model.count, using: &rng)
                        let v = value()
                        post.labels.insert(v, at: i)
                        model.insert(v, at: i)
                    case 6...7 where !model.isEmpty:
                        let i = Int.random(in: 0..<model.count, using: &rng)
                        post.labels.remove(at: i)
                        model.remove(at: i)
                    case 8 where !model.isEmpty:
                        let i = Int.random(in: 0..<model.count, using: &rng)
                        let v = value()
                        post.labels[i] = v
                        model[i] = v
                    default:
                        if step % 97 == 96 {
                            post.labels.removeAll()
                            model.removeAll()
                        }
                    }
                }
                #expect(post.labels.count == model.count, "seed \(seed), step \(step)")
                if !model.isEmpty {
                    let i = Int.random(in: 0..<model.count, using: &rng)
                    #expect(post.labels[i] == model[i], "seed \(seed), step \(step) index \(i)")
                }
                if step % 20 == 19 { #expect(Array(post.labels) == model, "seed \(seed), step \(step)") }
            }
            #expect(Array(post.labels) == model, "seed \(seed)")
            #expect(realm.indexProblems() == [], "seed \(seed)")
        }
    }

    @Test func aLongListCountsReadsAndAppendsWithoutWalkingIt() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let post = makePost(1)
            post.scores.append(contentsOf: (0..<100_000).map(Double.init))
            try realm.write { realm.add(post) }
            #expect(post.scores.count == 100_000)
            #expect(post.scores[99_999] == 99_999)
            #expect(post.scores[50_000] == 50_000)
            try realm.write { post.scores.append(-1) }
            #expect(post.scores.count == 100_001 && post.scores[100_000] == -1)
        }
    }

    @Test func aListChangeIsAModificationOfItsOwnerAndAnAddedOwnerOnlyAnInsertion() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let first = makePost(1)
            try realm.write { realm.add(first) }
            var deltas: [Delta] = []
            let token = realm.objects(Post.self).observe { deltas.append(Delta($0)) }
            let second = makePost(2)
            second.scores.append(1)
            second.tags.append(tag("x"))
            try realm.write { realm.add(second) }
            #expect(deltas.last == Delta(insertions: [1], count: 2))
            try realm.write { first.scores.append(2) }
            #expect(deltas.last == Delta(modifications: [0], count: 2))
            try realm.write { realm.delete(realm.objects(Tag.self)) }
            #expect(deltas.last == Delta(modifications: [1], count: 2), "losing a list element modifies the owner")
            token.invalidate()
        }
    }

    @Test func relationshipsWrittenAsRealmSwiftsDocumentationWritesThem() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [DogOwner.self, Dog.self, DogToy.self]))
            let owner = DogOwner()
            owner._id = ObjectId.generate()
            owner.name = "Ali"
            let rex = Dog()
            rex.name = "Rex"
            let fido = Dog()
            fido.name = "Fido"
            fido.breed = "Beagle"
            owner.dogs.append(objectsIn: [rex, fido])
            try realm.write { realm.add(owner) }
            #expect(owner.dogs.count == 2)
            #expect(owner.dogs.first?.name == "Rex")
            #expect(owner.dogs.last?.breed == "Beagle")
            let toy = DogToy()
            toy.name = "Ball"
            try realm.write {
                owner.dogs[0].favoriteToy = toy
                owner.dogs.append(Dog())
            }
            #expect(realm.objects(DogToy.self).first?.name == "Ball")
            #expect(realm.objects(Dog.self).count == 3)
            #expect(realm.objects(Dog.self).filter("favoriteToy.name == 'Ball'").first?.name == "Rex")
        }
    }

    @Test func aListAppendThatCannotAddItsObjectFailsTheWholeWrite() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let owner = makePost(1)
            owner.tags.append(tag("taken", 1))
            try realm.write { realm.add(owner) }
            do {
                try realm.write {
                    owner.scores.append(1)
                    owner.tags.append(tag("new"))
                    owner.tags.append(tag("taken", 2))  // the key is taken: the write fails here
                    owner.tags.append(tag("after"))
                }
                Issue.record("the write committed")
            } catch let error as Realm.Error {
                #expect(error.code == .primaryKeyExists)
            }
            // Nothing of the write is in the file, and the realm reads the old version.
            #expect(owner.tags.map(\.value) == ["taken"])
            #expect(owner.scores.isEmpty)
            #expect(realm.objects(Tag.self).map(\.value) == ["taken"])
            #expect(realm.object(ofType: Tag.self, forPrimaryKey: "taken")?.weight == 1)
            let other = try Realm(configuration: listConfiguration(dir))
            #expect(other.objects(Tag.self).count == 1)
            #expect(realm.indexProblems() == [])
        }
    }
}

@Suite struct ListStreamTests {
    @Test func aListIsObservedAsAStreamOfFrozenLists() async throws {
        try await withTemporaryDirectory { dir in
            let config = listConfiguration(dir)
            try onOtherThread {
                let realm = try Realm(configuration: config)
                let post = Post()
                post.id = 1
                post.scores.append(objectsIn: [1, 2])
                try realm.write { realm.add(post) }
            }
            let task = Task.detached { () -> [String] in
                let realm = try Realm(configuration: config)
                let post = realm.object(ofType: Post.self, forPrimaryKey: 1)!
                var seen: [String] = []
                for await change in post.scores.changes {
                    switch change {
                    case .initial(let frozen):
                        seen.append("initial \(frozen.elements)")
                        // Another thread appends once the stream runs.
                        try onOtherThread {
                            let writer = try Realm(configuration: config)
                            let same = writer.object(ofType: Post.self, forPrimaryKey: 1)!
                            try writer.write { same.scores.append(3) }
                        }
                    case .update(let frozen, let deletions, let insertions, _):
                        seen.append("update \(frozen.elements) -\(deletions) +\(insertions) frozen \(frozen.isFrozen)")
                        return seen
                    case .error(let error):
                        seen.append("error \(error)")
                    }
                }
                return seen
            }
            #expect(try await task.value == ["initial [1.0, 2.0]", "update [1.0, 2.0, 3.0] -[] +[2] frozen true"])
        }
    }

    @Test func aListCrossesThreadsByReference() throws {
        try withTemporaryDirectory { dir in
            let config = listConfiguration(dir)
            let realm = try Realm(configuration: config)
            let post = Post()
            post.id = 1
            post.scores.append(objectsIn: [1, 2, 3])
            post.labels.append("x")
            try realm.write { realm.add(post) }
            let reference = ThreadSafeReference(to: post.scores)
            let read = try onOtherThread { () -> [Double] in
                let other = try Realm(configuration: config)
                return Array(other.resolve(reference)!)
            }
            #expect(read == [1, 2, 3])
            #expect(reference.isInvalidated)
        }
    }

    @Test func aListIsObservedFromAQueue() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let post = Post()
            post.id = 1
            try realm.write { realm.add(post) }
            let queue = DispatchQueue(label: "list observer")
            let seen = LockedStrings()
            let updated = DispatchSemaphore(value: 0)
            let token = post.scores.observe(on: queue) { change in
                dispatchPrecondition(condition: .onQueue(queue))
                switch change {
                case .initial(let list): seen.append("initial \(list.count)")
                case .update(let list, _, let insertions, _):
                    seen.append("update \(Array(list)) +\(insertions)")
                    updated.signal()
                case .error(let error): seen.append("error \(error)")
                }
            }
            defer { token.invalidate() }
            queue.sync {}  // the initial delivery has run
            try realm.write { post.scores.append(7) }
            #expect(updated.wait(timeout: .now() + 10) == .success)
            #expect(seen.values == ["initial 0", "update [7.0] +[0]"])
        }
    }
}

/// Strings appended from a queue and read from the test.
final class LockedStrings: @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ s: String) { lock.withLock { items.append(s) } }
    var values: [String] { lock.withLock { items } }
}
