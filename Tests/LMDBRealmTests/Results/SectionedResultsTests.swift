import Foundation
import LMDBRealm
import TestSupport
import Testing

/// `sectioned(by:)`, `SectionedResults` and `ResultsSection`, written as RealmSwift's
/// documentation uses them.
extension Article {
    /// A computed property: the section's first letter.
    var sectionInitial: String { String(section.prefix(1)) }
}

@Suite struct SectionedResultsTests {
    /// A computed key path, as RealmSwift's documentation sections contacts by their first
    /// letter: sorted by the persisted property it reads, sectioned by its value.
    @Test func sectionsByAComputedKeyPath() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write {
                for (i, section) in ["Sports", "Arts", "Science", "World", "Books"].enumerated() {
                    realm.add(Article(id: "a\(i)", section: section, wordCount: 100 + i))
                }
            }
            let byInitial = realm.objects(Article.self).sectioned(by: \.sectionInitial, ascending: true)
            #expect(byInitial.allKeys == ["A", "B", "S", "W"])
            #expect(byInitial[2].map(\.section) == ["Science", "Sports"])
            let descending = realm.objects(Article.self).sectioned(
                by: \.sectionInitial, sortDescriptors: [SortDescriptor(keyPath: "section", ascending: false), SortDescriptor(keyPath: "wordCount")])
            #expect(descending.allKeys == ["W", "S", "B", "A"])
            #expect(descending[1].map(\.section) == ["Sports", "Science"])
        }
    }

    private func seed(_ realm: Realm) throws {
        try realm.write {
            for (i, section) in ["Sports", "Arts", "Sports", "World", "Arts", "Sports"].enumerated() {
                realm.add(Article(id: "a\(i)", section: section, wordCount: 100 + i))
            }
        }
    }

    @Test func sectionsByAKeyPathAreSortedAndGrouped() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let sections = realm.objects(Article.self).sectioned(by: \.section)
            #expect(sections.allKeys == ["Arts", "Sports", "World"])
            #expect(sections.count == 3)
            #expect(sections.map(\.count) == [2, 3, 1])
            #expect(sections[1].key == "Sports")
            #expect(sections[1].map(\.id) == ["a0", "a2", "a5"])
            #expect(sections[IndexPath(item: 1, section: 0)].id == "a4")
            #expect(sections.map(\.id) == ["Arts", "Sports", "World"])

            let descending = realm.objects(Article.self).sectioned(by: \.section, ascending: false)
            #expect(descending.allKeys == ["World", "Sports", "Arts"])

            // The first sort descriptor decides the sections, the next orders each one.
            let byWords = realm.objects(Article.self).sectioned(
                by: \.section,
                sortDescriptors: [
                    SortDescriptor(keyPath: "section"),
                    SortDescriptor(keyPath: "wordCount", ascending: false),
                ])
            #expect(byWords[1].map(\.id) == ["a5", "a2", "a0"])
        }
    }

    @Test func sectionsByAKeyFunction() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let byLetter = realm.objects(Article.self)
                .sectioned(
                    by: { String($0.section.prefix(1)) },
                    sortDescriptors: [SortDescriptor(keyPath: "section")])
            #expect(byLetter.allKeys == ["A", "S", "W"])
            let filtered = realm.objects(Article.self).where { $0.wordCount > 101 }
                .sectioned(sortDescriptors: [SortDescriptor(keyPath: "id")]) { $0.wordCount % 2 == 0 }
            #expect(filtered.allKeys == [true, false])
            #expect(filtered.map { $0.map(\.id) } == [["a2", "a4"], ["a3", "a5"]])
        }
    }

    /// The sections are the query's last step: its plan groups the objects, and says how.
    @Test func theSectionsArePartOfTheQueryPlan() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let articles = realm.objects(Article.self).where { $0.wordCount > 100 }
            // Article.section is indexed: its index walk sorts.
            #expect(articles.sectioned(by: \.section).explain() == "index-ordered scan of Article.section ascending, filtered; then sections by section")
            let byWords = articles.sectioned(by: \.wordCount)
            #expect(byWords.explain() == "full scan of Article, filtered; then sort by wordCount ascending; then sections by wordCount")
            #expect(byWords.allKeys == [101, 102, 103, 104, 105])
            let byLetter = articles.sectioned(by: { String($0.section.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "section")])
            #expect(byLetter.explain().hasSuffix("; then sections by a key function"))
            #expect(byLetter.allKeys == ["A", "S", "W"])
        }
    }

    /// Keys whose stored bytes differ but which Swift holds equal (canonically equivalent
    /// strings) make one section, its objects in sorted order, as RealmSwift's do.
    @Test func equalKeysOfDifferentBytesShareASection() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write {
                // "é" decomposed sorts before "f", "é" composed after it.
                realm.add(Article(id: "decomposed", section: "e\u{301}"))
                realm.add(Article(id: "f", section: "f"))
                realm.add(Article(id: "composed", section: "\u{E9}"))
                realm.add(Article(id: "decomposed2", section: "e\u{301}"))
            }
            let sections = realm.objects(Article.self).sectioned(by: \.section)
            #expect(sections.count == 2)
            #expect(sections.allKeys == ["\u{E9}", "f"])
            #expect(sections[0].map(\.id) == ["decomposed", "decomposed2", "composed"])
            #expect(sections[1].map(\.id) == ["f"])
            #expect(sections[IndexPath(item: 2, section: 0)].id == "composed")
        }
    }

    /// The sections are live: they follow commits.
    @Test func sectionsFollowCommits() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let sections = realm.objects(Article.self).sectioned(by: \.section)
            let frozen = sections.freeze()
            try realm.write { realm.add(Article(id: "b", section: "Books")) }
            #expect(sections.allKeys == ["Arts", "Books", "Sports", "World"])
            #expect(frozen.allKeys == ["Arts", "Sports", "World"])
            #expect(frozen.isFrozen && !sections.isFrozen)
        }
    }

    /// Section-level and row-level changes, as a table view applies them.
    @Test func observersGetSectionAndRowChanges() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let sections = realm.objects(Article.self).sectioned(by: \.section)
            var seen: [String] = []
            let token = sections.observe { change in
                switch change {
                case .initial(let sections):
                    seen.append("initial \(sections.allKeys)")
                case .update(
                    let sections, let deletions, let insertions, let modifications, let sectionsToInsert,
                    let sectionsToDelete):
                    func paths(_ p: [IndexPath]) -> String {
                        p.map { "\($0.section).\($0.item)" }.joined(separator: ",")
                    }
                    seen.append(
                        "\(sections.allKeys) -[\(paths(deletions))] +[\(paths(insertions))] ~[\(paths(modifications))] "
                            + "+s\(Array(sectionsToInsert)) -s\(Array(sectionsToDelete))")
                }
            }
            defer { token.invalidate() }
            // An object into an existing section.
            try realm.write { realm.add(Article(id: "a6", section: "Arts")) }
            // A new section: no row insertions besides it.
            try realm.write { realm.add(Article(id: "b0", section: "Books")) }
            // A section's last object deleted: the section goes.
            try realm.write { realm.delete(realm.object(ofType: Article.self, forPrimaryKey: "a3")!) }
            // A modification in place.
            try realm.write { realm.object(ofType: Article.self, forPrimaryKey: "a2")!.wordCount = 1 }
            // An object changes section.
            try realm.write { realm.object(ofType: Article.self, forPrimaryKey: "a0")!.section = "Arts" }
            #expect(
                seen == [
                    "initial [\"Arts\", \"Sports\", \"World\"]",
                    "[\"Arts\", \"Sports\", \"World\"] -[] +[0.2] ~[] +s[] -s[]",
                    "[\"Arts\", \"Books\", \"Sports\", \"World\"] -[] +[] ~[] +s[1] -s[]",
                    "[\"Arts\", \"Books\", \"Sports\"] -[] +[] ~[] +s[] -s[3]",
                    "[\"Arts\", \"Books\", \"Sports\"] -[] +[] ~[2.1] +s[] -s[]",
                    "[\"Arts\", \"Books\", \"Sports\"] -[2.0] +[0.0] ~[] +s[] -s[]",
                ])
        }
    }

    /// A section's observer sees only its own objects' changes.
    @Test func aSectionIsObservedOnItsOwn() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let sports = realm.objects(Article.self).sectioned(by: \.section)[1]
            var seen: [String] = []
            let token = sports.observe { change in
                switch change {
                case .initial(let section):
                    seen.append("initial \(section.key) \(section.count)")
                case .update(let section, let deletions, let insertions, let modifications, _, _):
                    seen.append(
                        "\(section.count) -\(deletions.map(\.item)) +\(insertions.map(\.item)) ~\(modifications.map(\.item))"
                    )
                }
            }
            defer { token.invalidate() }
            try realm.write { realm.add(Article(id: "z", section: "World")) }
            try realm.write { realm.add(Article(id: "a9", section: "Sports")) }
            try realm.write { realm.object(ofType: Article.self, forPrimaryKey: "a0")!.wordCount = 7 }
            #expect(seen == ["initial Sports 3", "4 -[] +[3] ~[]", "4 -[] +[] ~[0]"])
        }
    }
}
