// specs/tweets.spec.json by hand on simdjson's On-Demand API (Debian libsimdjson-dev): the state of the art for
// projecting a few fields out of JSON on one core. Each line is copied into a padded buffer and iterated once,
// member by member (unread members are skipped by On-Demand without being parsed); rules as the Codable peer's:
// id, id_str, created_at, text, user.{id, screen_name, followers_count} and retweet_count are required,
// user.verified defaults to false, favorite_count to 0, lang to "und", in_reply_to_status_id is omitted when
// missing or null; integers must be int64, strings strings. Invalid lines are reported on stderr as "LINE\n".
// On-Demand validates UTF-8 and the document's structure, but not the grammar inside values it skips. Built with
// -march=native: On-Demand is compiled into the program for the CPU it targets (without it, its portable kernel).
//   c++ -O3 -march=native -std=c++17 map_tweets_simdjson.cpp -lsimdjson -o map-tweets-simdjson && ./map-tweets-simdjson corpus.ndjson
// With --computed, specs/tweets-computed.spec.json instead (issue #32): id; engagement = retweet_count +
// favorite_count (null or missing: 0); reach = user.followers_count * (retweet_count + 1); byline = "@" +
// user.screen_name + " (" + lang (null or missing: "und") + ")"; handle = user.screen_name lower-cased (ASCII: the
// corpus's screen names are). Numbers as int64 (the corpus's are; streammap's arithmetic is exact decimal).
//   ./map-tweets-simdjson --computed corpus.ndjson
#include <simdjson.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <cstdlib>
#include <cstring>

using namespace simdjson;

namespace {

struct Output {
    std::string buffer;
    void flush() {
        fwrite(buffer.data(), 1, buffer.size(), stdout);
        buffer.clear();
    }
    void raw(std::string_view s) { buffer.append(s); }
    void number(int64_t v) { buffer.append(std::to_string(v)); }
    void string(std::string_view s) {
        static const char hex[] = "0123456789abcdef";
        buffer.push_back('"');
        for (unsigned char c : s) {
            switch (c) {
            case '"': buffer.append("\\\""); break;
            case '\\': buffer.append("\\\\"); break;
            case '\n': buffer.append("\\n"); break;
            case '\r': buffer.append("\\r"); break;
            case '\t': buffer.append("\\t"); break;
            case '\b': buffer.append("\\b"); break;
            case '\f': buffer.append("\\f"); break;
            default:
                if (c < 0x20) {
                    buffer.append("\\u00");
                    buffer.push_back(hex[c >> 4]);
                    buffer.push_back(hex[c & 15]);
                } else {
                    buffer.push_back((char)c);
                }
            }
        }
        buffer.push_back('"');
    }
};

/// Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

bool digits(std::string_view s, size_t at, size_t count, int &out) {
    out = 0;
    for (size_t i = at; i < at + count; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        out = out * 10 + (s[i] - '0');
    }
    return true;
}

/// Twitter's created_at ("Sun Aug 31 00:29:15 +0000 2014") in epoch milliseconds.
bool twitter_date_ms(std::string_view s, int64_t &ms) {
    static const char *months = "JanFebMarAprMayJunJulAugSepOctNovDec";
    static const char *days = "MonTueWedThuFriSatSun";
    if (s.size() != 30 || s[3] != ' ' || s[7] != ' ' || s[10] != ' ' || s[13] != ':' || s[16] != ':' || s[19] != ' '
        || s[25] != ' ' || (s[20] != '+' && s[20] != '-')) return false;
    size_t weekday = std::string_view(days).find(s.substr(0, 3));
    if (weekday == std::string_view::npos || weekday % 3 != 0) return false;
    size_t month = std::string_view(months).find(s.substr(4, 3));
    if (month == std::string_view::npos || month % 3 != 0) return false;
    int day, hour, minute, second, zh, zm, year;
    if (!digits(s, 8, 2, day) || !digits(s, 11, 2, hour) || !digits(s, 14, 2, minute) || !digits(s, 17, 2, second)
        || !digits(s, 21, 2, zh) || !digits(s, 23, 2, zm) || !digits(s, 26, 4, year)) return false;
    if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 || zm > 59) return false;
    int64_t offset = (zh * 3600 + zm * 60) * (s[20] == '-' ? -1 : 1);
    int64_t seconds = days_from_civil(year, (unsigned)(month / 3 + 1), (unsigned)day) * 86400 + hour * 3600 + minute * 60 + second;
    ms = (seconds - offset) * 1000;
    return true;
}

/// An int64 value into `out` (and `has` set); false when the value is not one.
bool integer(ondemand::value &value, int64_t &out, bool &has) {
    if (value.get_int64().get(out)) return false;
    has = true;
    return true;
}

/// A string value into `out` (and `has` set); false when the value is not one.
bool text_value(ondemand::value &value, std::string &out, bool &has) {
    std::string_view s;
    if (value.get_string().get(s)) return false;
    out = s;
    has = true;
    return true;
}

/// A value that may be null: an int64 into `out` unless null (then `out` is left as it is).
bool nullable_integer(ondemand::value &value, int64_t &out) {
    bool is_null = false, present;
    return !value.is_null().get(is_null) && (is_null || integer(value, out, present));
}

/// A value that may be null: a string into `out`, or `fallback` for null.
bool nullable_text(ondemand::value &value, std::string &out, const char *fallback) {
    bool is_null = false, present;
    if (value.is_null().get(is_null)) return false;
    if (is_null) {
        out = fallback;
        return true;
    }
    return text_value(value, out, present);
}

struct Mapper {
    ondemand::parser parser;
    std::vector<char> padded;
    Output out;
    unsigned long mapped = 0, rejected = 0;

    /// The line copied into the padded buffer and iterated: its document and its object.
    bool open(const unsigned char *line, size_t len, ondemand::document &doc, ondemand::object &record) {
        if (padded.size() < len + SIMDJSON_PADDING) padded.resize(len + SIMDJSON_PADDING);
        memcpy(padded.data(), line, len);
        padded_string_view view(padded.data(), len, padded.size());
        return !parser.iterate(view).get(doc) && !doc.get_object().get(record);
    }

    bool map(const unsigned char *line, size_t len) {
        ondemand::document doc;
        ondemand::object record;
        if (!open(line, len, doc, record)) return false;
        int64_t id = 0, created = 0, uid = 0, followers = 0, retweets = 0, likes = 0, reply = 0;
        std::string id_str, text, handle, lang = "und";
        bool has_id = false, has_id_str = false, has_created = false, has_text = false, has_user = false;
        bool has_retweets = false, has_reply = false, verified = false;
        for (auto field : record) {
            std::string_view key;
            ondemand::value value;
            if (field.unescaped_key().get(key) || field.value().get(value)) return false;
            bool is_null = false;
            if (key == "id") {
                if (!integer(value, id, has_id)) return false;
            } else if (key == "id_str") {
                if (!text_value(value, id_str, has_id_str)) return false;
            } else if (key == "created_at") {
                std::string_view s;
                if (value.get_string().get(s) || !twitter_date_ms(s, created)) return false;
                has_created = true;
            } else if (key == "text") {
                if (!text_value(value, text, has_text)) return false;
            } else if (key == "user") {
                ondemand::object user;
                if (value.get_object().get(user)) return false;
                bool has_uid = false, has_handle = false, has_followers = false;
                for (auto member : user) {
                    std::string_view k;
                    ondemand::value v;
                    if (member.unescaped_key().get(k) || member.value().get(v)) return false;
                    if (k == "id") {
                        if (!integer(v, uid, has_uid)) return false;
                    } else if (k == "screen_name") {
                        if (!text_value(v, handle, has_handle)) return false;
                    } else if (k == "followers_count") {
                        if (!integer(v, followers, has_followers)) return false;
                    } else if (k == "verified") {
                        if (v.is_null().get(is_null) || (!is_null && v.get_bool().get(verified))) return false;
                    }
                }
                has_user = has_uid && has_handle && has_followers;
            } else if (key == "retweet_count") {
                if (!integer(value, retweets, has_retweets)) return false;
            } else if (key == "favorite_count") {
                if (!nullable_integer(value, likes)) return false;
            } else if (key == "lang") {
                if (!nullable_text(value, lang, "und")) return false;
            } else if (key == "in_reply_to_status_id") {
                if (value.is_null().get(is_null)) return false;
                has_reply = false;
                if (!is_null && !integer(value, reply, has_reply)) return false;
            }
        }
        const char *trailing;
        if (doc.current_location().get(trailing) == SUCCESS) return false;  // something after the object
        if (!(has_id && has_id_str && has_created && has_text && has_user && has_retweets)) return false;
        out.raw("{\"id\":");
        out.number(id);
        out.raw(",\"idStr\":");
        out.string(id_str);
        out.raw(",\"createdAtMs\":");
        out.number(created);
        out.raw(",\"text\":");
        out.string(text);
        out.raw(",\"user\":{\"id\":");
        out.number(uid);
        out.raw(",\"handle\":");
        out.string(handle);
        out.raw(",\"followers\":");
        out.number(followers);
        out.raw(verified ? ",\"verified\":true}" : ",\"verified\":false}");
        out.raw(",\"stats\":{\"retweets\":");
        out.number(retweets);
        out.raw(",\"likes\":");
        out.number(likes);
        out.raw("},\"lang\":");
        out.string(lang);
        if (has_reply) {
            out.raw(",\"replyTo\":");
            out.number(reply);
        }
        out.raw("}\n");
        if (out.buffer.size() >= (1 << 16)) out.flush();
        return true;
    }
};

/// specs/tweets-computed.spec.json: the same reading, four computed fields.
struct ComputedMapper : Mapper {
    bool computed(const unsigned char *line, size_t len) {
        ondemand::document doc;
        ondemand::object record;
        if (!open(line, len, doc, record)) return false;
        int64_t id = 0, followers = 0, retweets = 0, likes = 0;
        std::string handle, lang = "und";
        bool has_id = false, has_retweets = false, has_followers = false, has_handle = false;
        for (auto field : record) {
            std::string_view key;
            ondemand::value value;
            if (field.unescaped_key().get(key) || field.value().get(value)) return false;
            if (key == "id") {
                if (!integer(value, id, has_id)) return false;
            } else if (key == "user") {
                ondemand::object user;
                if (value.get_object().get(user)) return false;
                for (auto member : user) {
                    std::string_view k;
                    ondemand::value v;
                    if (member.unescaped_key().get(k) || member.value().get(v)) return false;
                    if (k == "screen_name") {
                        if (!text_value(v, handle, has_handle)) return false;
                    } else if (k == "followers_count") {
                        if (!integer(v, followers, has_followers)) return false;
                    }
                }
            } else if (key == "retweet_count") {
                if (!integer(value, retweets, has_retweets)) return false;
            } else if (key == "favorite_count") {
                if (!nullable_integer(value, likes)) return false;
            } else if (key == "lang") {
                if (!nullable_text(value, lang, "und")) return false;
            }
        }
        const char *trailing;
        if (doc.current_location().get(trailing) == SUCCESS) return false;  // something after the object
        if (!(has_id && has_retweets && has_followers && has_handle)) return false;
        out.raw("{\"id\":");
        out.number(id);
        out.raw(",\"engagement\":");
        out.number(retweets + likes);
        out.raw(",\"reach\":");
        out.number(followers * (retweets + 1));
        out.raw(",\"byline\":");
        out.string("@" + handle + " (" + lang + ")");
        for (auto &c : handle) if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        out.raw(",\"handle\":");
        out.string(handle);
        out.raw("}\n");
        if (out.buffer.size() >= (1 << 16)) out.flush();
        return true;
    }
};

bool computing = false;

void on_line(const unsigned char *line, size_t len, unsigned long lineno, void *ctx) {
    Mapper &m = *static_cast<Mapper *>(ctx);
    if (computing ? static_cast<ComputedMapper &>(m).computed(line, len) : m.map(line, len)) {
        m.mapped++;
    } else {
        m.rejected++;
        fprintf(stderr, "%lu\n", lineno);
    }
}

/// lines.h's `for_each_line` (C) for C++: every non-empty line (without '\n' and a trailing '\r'), 1 MiB reads.
int for_each_line(const char *path, Mapper &m) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 3;
    }
    size_t cap = 1 << 20, len = 0;
    std::vector<unsigned char> buf(cap);
    unsigned long lineno = 0;
    auto line = [&](size_t start, size_t l) {
        lineno++;
        if (l > 0 && buf[start + l - 1] == '\r') l--;
        if (l > 0) on_line(buf.data() + start, l, lineno, &m);
    };
    for (;;) {
        if (len == cap) buf.resize(cap *= 2);
        size_t n = fread(buf.data() + len, 1, cap - len, f);
        len += n;
        size_t start = 0;
        for (;;) {
            auto *nl = static_cast<unsigned char *>(memchr(buf.data() + start, '\n', len - start));
            if (!nl) break;
            size_t end = (size_t)(nl - buf.data());
            line(start, end - start);
            start = end + 1;
        }
        if (n == 0) {
            if (start < len) line(start, len - start);
            break;
        }
        memmove(buf.data(), buf.data() + start, len - start);
        len -= start;
    }
    fclose(f);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    computing = argc == 3 && std::string_view(argv[1]) == "--computed";
    if (argc != 2 && !computing) {
        fputs("usage: map-tweets-simdjson [--computed] FILE\n", stderr);
        return 64;
    }
    ComputedMapper m;
    int rc = for_each_line(argv[argc - 1], m);
    m.out.flush();
    return rc;
}
