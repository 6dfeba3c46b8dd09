// fb303 base service, as inherited by ThriftHiveMetastore.
// Only the wire contract matters here: method names, argument ids and
// which calls are oneway must match what Hive clients were built against.

namespace py thrift_idl.fb303

// Coarse health state reported by getStatus().
enum fb_status {
  DEAD = 0,
  STARTING = 1,
  ALIVE = 2,
  STOPPING = 3,
  STOPPED = 4,
  WARNING = 5,
}

service FacebookService {
  // identity
  string getName(),
  string getVersion(),

  // health
  fb_status getStatus(),
  string getStatusDetails(),
  i64 aliveSince(),

  // counters
  map<string, i64> getCounters(),
  i64 getCounter(1: string key),

  // runtime options
  void setOption(1: string key, 2: string value),
  string getOption(1: string key),
  map<string, string> getOptions(),

  // profiling
  string getCpuProfile(1: i32 profileDurationInSec),

  // lifecycle; fire-and-forget
  oneway void reinitialize(),
  oneway void shutdown(),
}
