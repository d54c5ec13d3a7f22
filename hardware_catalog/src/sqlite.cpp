#include "capsim/hardware/sqlite.hpp"

#include <sqlite3.h>

#include <utility>

namespace capsim::hardware::sqlite {

Statement::Statement(sqlite3* db, std::string_view sql) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK ||
      stmt_ == nullptr) {
    // Empty SQL prepares to no statement: an error too, never a silent no-op.
    error_ = stmt_ == nullptr && db != nullptr && sqlite3_errcode(db) == SQLITE_OK ? "no SQL statement"
                                                                                     : errmsg(db);
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), error_(std::move(other.error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    error_ = std::move(other.error_);
  }
  return *this;
}

void Statement::bind(int index, std::string_view text) {
  if (stmt_) sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

void Statement::bind(int index, std::int64_t value) {
  if (stmt_) sqlite3_bind_int64(stmt_, index, static_cast<sqlite3_int64>(value));
}

void Statement::bind(int index, double value) {
  if (stmt_) sqlite3_bind_double(stmt_, index, value);
}

void Statement::bind_null(int index) {
  if (stmt_) sqlite3_bind_null(stmt_, index);
}

void Statement::bind_blob(int index, const void* data, std::size_t size) {
  if (stmt_) sqlite3_bind_blob64(stmt_, index, size ? data : "", size, SQLITE_TRANSIENT);
}

Step Statement::step() {
  if (!stmt_) return Step::error;
  switch (sqlite3_step(stmt_)) {
    case SQLITE_ROW: return Step::row;
    case SQLITE_DONE: return Step::done;
    default: return Step::error;
  }
}

void Statement::reset() {
  if (!stmt_) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int column) const {
  if (!stmt_) return {};
  const auto* p = sqlite3_column_text(stmt_, column);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::int64_t Statement::int64(int column) const { return stmt_ ? sqlite3_column_int64(stmt_, column) : 0; }

int Statement::integer(int column) const { return stmt_ ? sqlite3_column_int(stmt_, column) : 0; }

double Statement::real(int column) const { return stmt_ ? sqlite3_column_double(stmt_, column) : 0.0; }

std::vector<unsigned char> Statement::blob(int column) const {
  if (!stmt_) return {};
  const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(stmt_, column));
  const auto n = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
  return p ? std::vector<unsigned char>(p, p + n) : std::vector<unsigned char>{};
}

bool Statement::is_null(int column) const { return !stmt_ || sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

Transaction::Transaction(sqlite3* db) : db_(db), active_(exec(db, "BEGIN IMMEDIATE;")) {}

Transaction::~Transaction() {
  if (active_) exec(db_, "ROLLBACK;");
}

bool Transaction::commit() {
  if (!active_ || !exec(db_, "COMMIT;")) return false;
  active_ = false;
  return true;
}

bool exec(sqlite3* db, const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK; }

std::string errmsg(sqlite3* db) { return db ? sqlite3_errmsg(db) : "out of memory"; }

int primary_errcode(sqlite3* db) { return sqlite3_errcode(db) & 0xff; }

int changes(sqlite3* db) { return sqlite3_changes(db); }

std::int64_t last_insert_rowid(sqlite3* db) { return sqlite3_last_insert_rowid(db); }

}  // namespace capsim::hardware::sqlite
