import ArticleCacheKit
import Foundation
import Testing

@Suite struct ArticleDTOTests {
    private func decodeDoc(_ json: String) throws -> ArticleDTO {
        try ArticleSearchResponse.decode(Data(#"{"status":"OK","response":{"docs":[\#(json)]}}"#.utf8)).docs[0]
    }

    private let july5 = Date(timeIntervalSince1970: 1_436_120_103)   // 2015-07-05T18:15:03Z

    @Test func mapsEveryField() throws {
        let dto = try decodeDoc("""
            {"_id": "nyt://article/1", "web_url": "https://www.nytimes.com/a.html",
             "lead_paragraph": "Lead.", "abstract": "Abstract.", "headline": {"main": "Main", "kicker": null},
             "pub_date": "2015-07-05T18:15:03+0000", "section_name": "Sports", "word_count": 612,
             "multimedia": [{"url": "images/a.jpg", "subtype": "xlarge"}, {"url": "images/b.jpg"}]}
            """)
        #expect(dto.id == "nyt://article/1")
        #expect(dto.webURL == "https://www.nytimes.com/a.html")
        #expect(dto.leadParagraph == "Lead.")
        #expect(dto.abstract == "Abstract.")
        #expect(dto.headline == "Main")
        #expect(dto.pubDate == july5)
        #expect(dto.sectionName == "Sports")
        #expect(dto.wordCount == 612)
        #expect(dto.multimediaURLs == ["images/a.jpg", "images/b.jpg"])
    }

    @Test func mapsBylineKeywordsAndImages() throws {
        let dto = try decodeDoc("""
            {"_id": "x", "byline": {"original": "By Zoë Adams and Bo Li",
               "person": [{"firstname": "Zoë", "middlename": null, "lastname": "Adams", "rank": 1},
                          {"firstname": "Bo", "lastname": "Li", "rank": 2}]},
             "keywords": [{"name": "subject", "value": "Basketball"}, {"name": "persons"}, {"name": "glocations", "value": "Brooklyn (NYC)"}],
             "multimedia": [{"url": "images/a.jpg", "width": 600, "height": 400, "type": "image"},
                            {"url": "https://static01.nyt.com/b.jpg", "width": 75, "height": 75, "type": "image"}]}
            """)
        #expect(dto.byline?.people.map(\.name) == ["Zoë Adams", "Bo Li"])
        #expect(dto.byline?.author?.key == "zoe-adams" && dto.byline?.author?.name == "Zoë Adams")
        #expect(dto.keywords == [KeywordDTO(name: "subject", value: "Basketball"), KeywordDTO(name: "glocations", value: "Brooklyn (NYC)")],
                "a keyword without a value is passed over")
        #expect(dto.multimedia.map(\.absoluteURL) == ["https://www.nytimes.com/images/a.jpg", "https://static01.nyt.com/b.jpg"])
        #expect(dto.multimedia.map(\.width) == [600, 75])

        let textOnly = try decodeDoc(#"{"_id": "y", "byline": {"original": "By The New York Times", "person": []}}"#)
        #expect(textOnly.byline?.author?.name == "The New York Times" && textOnly.byline?.author?.key == "the-new-york-times")
        #expect(try decodeDoc(#"{"_id": "z", "byline": []}"#).byline == nil)
        #expect(try decodeDoc(#"{"_id": "z"}"#).keywords.isEmpty)
    }

    @Test(arguments: ["2015-07-05T18:15:03+0000", "2015-07-05T18:15:03Z", "2015-07-05T18:15:03+00:00",
                      "2015-07-05T20:15:03+0200", "2015-07-05T18:15:03.000Z"])
    func bothDateForms(_ text: String) throws {
        #expect(ArticleDTO.parseDate(text) == july5)
        #expect(try decodeDoc(#"{"_id": "x", "pub_date": "\#(text)"}"#).pubDate == july5)
    }

    @Test func unreadableDateIsAnError() {
        #expect(throws: ServiceError.self) { try decodeDoc(#"{"_id": "x", "pub_date": "July 5th"}"#) }
    }

    @Test func wordCountAsString() throws {
        #expect(try decodeDoc(#"{"_id": "x", "word_count": "731"}"#).wordCount == 731)
        #expect(try decodeDoc(#"{"_id": "x", "word_count": "many"}"#).wordCount == 0)
        #expect(try decodeDoc(#"{"_id": "x", "word_count": null}"#).wordCount == 0)
    }

    @Test func multimediaAsObject() throws {
        let dto = try decodeDoc("""
            {"_id": "x", "multimedia": {"caption": "A dunk.", "default": {"url": "https://static01.nyt.com/a.jpg", "height": 600},
                                        "thumbnail": {"url": "https://static01.nyt.com/t.jpg"}}}
            """)
        #expect(dto.multimediaURLs == ["https://static01.nyt.com/a.jpg", "https://static01.nyt.com/t.jpg"])
        #expect(try decodeDoc(#"{"_id": "x", "multimedia": {}}"#).multimediaURLs.isEmpty)
        #expect(try decodeDoc(#"{"_id": "x", "multimedia": null}"#).multimediaURLs.isEmpty)
    }

    @Test func absentAndEmptyFields() throws {
        let dto = try decodeDoc(#"{"_id": "x", "abstract": "", "lead_paragraph": null, "headline": [], "section_name": ""}"#)
        #expect(dto.abstract == nil)
        #expect(dto.leadParagraph == "")
        #expect(dto.headline == "")
        #expect(dto.sectionName == "")
        #expect(dto.webURL == "")
        #expect(dto.wordCount == 0)
        #expect(dto.multimediaURLs.isEmpty)
        // Without `_id`, the URL is the key; without either, the document is unusable.
        #expect(try decodeDoc(#"{"web_url": "https://www.nytimes.com/b.html"}"#).id == "https://www.nytimes.com/b.html")
        #expect(throws: ServiceError.self) { try decodeDoc(#"{"_id": ""}"#) }
    }

    @Test func statusOtherThanOKIsAnError() {
        #expect(throws: ServiceError.apiStatus("ERROR")) {
            try ArticleSearchResponse.decode(Data(#"{"status": "ERROR", "errors": ["Invalid api-key"]}"#.utf8))
        }
        #expect(throws: ServiceError.apiStatus("missing")) {
            try ArticleSearchResponse.decode(Data(#"{"fault": {"faultstring": "Rate limit quota violation"}}"#.utf8))
        }
        #expect(throws: ServiceError.self) { try ArticleSearchResponse.decode(Data("<html>".utf8)) }
    }

    @Test func bundledSampleIsATenDocumentPage() async throws {
        let page = try ArticleSearchResponse.decode(try await BundledSampleService().execute(ArticleSearch().request))
        #expect(page.docs.count == 10)
        #expect(Set(page.docs.map(\.id)).count == 10)
        #expect(page.docs.allSatisfy { $0.id.hasPrefix("nyt://article/") && !$0.headline.isEmpty })
    }

    @Test func queryItems() {
        let search = ArticleSearch(query: "basketball", beginDate: ArticleSearch.parseDay("20150701"),
                                   endDate: ArticleSearch.parseDay("20150707"), page: 2, apiKey: "k", timeout: 7)
        let request = search.request
        #expect(request.path == "/svc/search/v2/articlesearch.json")
        #expect(request.timeout == 7)
        #expect(request.queryItems.map { "\($0.name)=\($0.value ?? "")" }
                    == ["q=basketball", "begin_date=20150701", "end_date=20150707", "page=2", "api-key=k"])
        #expect(ArticleSearch.parseDay("2015-07-01") == nil)
        #expect(ArticleSearch().request.queryItems.map(\.name) == ["page"])
    }
}
