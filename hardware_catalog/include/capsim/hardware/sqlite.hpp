// The one place capsim uses SQLite's C API for statements (issue 53): a prepared statement
// that finalizes itself, a transaction that rolls back unless committed, and the few
// connection calls the stores need. sqlite3.h stays out of this header (SQLite's handles are
// only declared), so the stores' users never see the C API.
//
// Ownership: a Statement owns its sqlite3_stmt, never the connection; it must go before the
// connection closes (SQLite does not close a connection with statements left). Neither type is
// thread-safe: use them on the thread that uses the connection (one Store per thread).
//
// Read an error's text (errmsg) before anything else runs on the connection: a ROLLBACK or
// another statement replaces it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace capsim::hardware::sqlite {

// What one step of a statement gave.
enum class Step {
  row,    // a row is ready for the column getters
  done,   // finished (or, for a write, done)
  error,  // failed: errmsg(db) says why (a corrupt page is an error, never the end of the rows)
};

// A prepared statement; move-only, finalized by its destructor. A statement that did not
// prepare (ok() false) binds nothing and steps to Step::error.
class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  // SQLite's message when the statement did not prepare, "" when it did.
  const std::string& error() const { return error_; }

  // Parameters count from 1, as in the SQL (?1, ?2, ...). Text and blobs are copied.
  void bind(int index, std::string_view text);
  void bind(int index, const char* text) { bind(index, std::string_view(text)); }
  void bind(int index, std::int64_t value);
  void bind(int index, int value) { bind(index, static_cast<std::int64_t>(value)); }
  void bind(int index, double value);
  void bind_null(int index);
  void bind_blob(int index, const void* data, std::size_t size);

  Step step();
  // Ready to run again, with every parameter unbound (null).
  void reset();

  // Columns count from 0. A null column reads as "", 0 or an empty blob.
  std::string text(int column) const;
  std::int64_t int64(int column) const;
  int integer(int column) const;
  double real(int column) const;
  std::vector<unsigned char> blob(int column) const;
  bool is_null(int column) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  std::string error_;
};

// BEGIN IMMEDIATE on construction (check active()); rolls back on destruction unless commit()
// succeeded. A failed commit leaves it active, so the destructor rolls back.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  bool active() const { return active_; }
  bool commit();

 private:
  sqlite3* db_;
  bool active_ = false;
};

// Runs SQL (several statements allowed) that returns no rows; false on an error (errmsg).
bool exec(sqlite3* db, const char* sql);
// SQLite's message for the connection's last error; "out of memory" without a connection.
std::string errmsg(sqlite3* db);
// The primary result code of the connection's last error (SQLITE_CORRUPT, ...: errcode & 0xff).
int primary_errcode(sqlite3* db);
// Rows the last INSERT/UPDATE/DELETE changed, and the row id of the last INSERT.
int changes(sqlite3* db);
std::int64_t last_insert_rowid(sqlite3* db);

}  // namespace capsim::hardware::sqlite
