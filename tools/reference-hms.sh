#!/usr/bin/env bash
# Starts a real Apache Hive Metastore as the reference server for the differential tests
# (tests/test_conformance.py) and the benchmark. Loopback only.
#
# usage: tools/reference-hms.sh [--hive 2.3|4] [--port 19083] [--dir DIR] [--python PYTHON] [--heap 2g]
#                               [--java JAVA]
#                               [--jdbc-url URL [--jdbc-user U] [--jdbc-password P] [--jdbc-jar JAR]]
#   --hive 2.3 (default): the Hive Metastore 2.3 bundled in pyspark's jars (--python must have pyspark).
#   --hive 4:   the Apache Hive 4 standalone metastore, whose classpath comes from
#               `python -m tools.java_artifacts fetch hive4-metastore` (not fetched here: without it
#               this script fails and names that command). Runs on Java 17. Its schema is created (or
#               upgraded) by Hive's schematool before the metastore starts (schematool.log).
#   --python:   interpreter with the project's test dependencies (default: python3)
#   --dir:      working folder for metastore_db, warehouse, conf and hms.log (default: a new temp dir)
#   --java:     the java binary (default: java on PATH, 17+)
#   --jdbc-url: back the metastore with a real database instead of embedded Derby:
#       jdbc:postgresql://127.0.0.1:5432/hmsref or jdbc:mariadb://127.0.0.1:3306/hmsref. The database must
#       exist and be empty or hold this Hive version's schema; the tables are created on start.
#       Driver jar: Hive 2.3 uses Debian's (/usr/share/java/postgresql.jar from libpostgresql-jdbc-java,
#       /usr/share/java/mariadb-java-client.jar from libmariadb-java) unless --jdbc-jar names another;
#       Hive 4 has its drivers in its classpath (--jdbc-jar adds one in front).
# Environment: HMS_REFERENCE_JAVA_OPTS, more JVM options (word-split; the tests pass C1-only ones);
#   HMS_REFERENCE_RETRY_INTERVAL, the pause between the metastore's own retries of a failed store
#   call (hive.hmshandler.retry.interval; Hive's default 2000ms makes each such error take ~20 s; the
#   tests set 10ms: the same attempts, the same answer).
# Prints "pid=<PID> port=<PORT> dir=<DIR>" once the port accepts connections; stop it with kill <PID>.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hive=2.3 port=19083 dir="" py=python3 heap=2g java=java
jdbc_url="" jdbc_user="" jdbc_password="" jdbc_jar=""
while [ $# -gt 0 ]; do
  case "$1" in
    --hive) hive=$2; shift 2;;
    --port) port=$2; shift 2;;
    --dir) dir=$2; shift 2;;
    --python) py=$2; shift 2;;
    --heap) heap=$2; shift 2;;
    --java) java=$2; shift 2;;
    --jdbc-url) jdbc_url=$2; shift 2;;
    --jdbc-user) jdbc_user=$2; shift 2;;
    --jdbc-password) jdbc_password=$2; shift 2;;
    --jdbc-jar) jdbc_jar=$2; shift 2;;
    *) echo "unknown argument: $1" >&2; exit 2;;
  esac
done
case "$hive" in
  2|2.3|2.3.*) hive=2.3;;
  4|4.*) hive=4;;
  *) echo "unsupported --hive $hive (2.3 or 4)" >&2; exit 2;;
esac
command -v "$java" >/dev/null || { echo "java (17+) is required ($java not found)" >&2; exit 1; }
case "$py" in */*) py=$(cd "$(dirname "$py")" && pwd)/$(basename "$py");; esac  # we cd to --dir below

if [ "$hive" = 2.3 ]; then
  jars=$("$py" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))') \
    || { echo "--hive 2.3 needs pyspark in $py" >&2; exit 1; }
  [ -d "$jars" ] || { echo "no pyspark jars under $jars" >&2; exit 1; }
  classpath="$jars/*"
else
  jars=$(cd "$root" && PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$py" -m tools.java_artifacts path hive4-metastore) \
    || { echo "--hive 4 needs the Hive 4 metastore: run python -m tools.java_artifacts fetch hive4-metastore" >&2; exit 1; }
  classpath="$jars/*"
fi

[ -n "$dir" ] || dir=$(mktemp -d -t reference-hms.XXXXXX)
mkdir -p "$dir/conf" "$dir/warehouse"
dir=$(cd "$dir" && pwd)

xml() { local v=${1//&/&amp;}; v=${v//</&lt;}; v=${v//>/&gt;}; printf '%s' "$v"; }
# the password reaches the JVM in the environment, not in the written configuration; Hive 4 reads an
# empty <value/> as unset (and then uses its default password), so it gets a substitution instead
export HMS_REFERENCE_JDBC_PASSWORD="$jdbc_password"
if [ "$hive" = 4 ]; then pw_value='${env.HMS_REFERENCE_JDBC_PASSWORD}'; else pw_value=$(xml "$jdbc_password"); fi
driver_cp=""
if [ -n "$jdbc_url" ]; then
  case "$jdbc_url" in
    jdbc:postgresql:*) driver=org.postgresql.Driver; default_jar=/usr/share/java/postgresql.jar;;
    jdbc:mariadb:*|jdbc:mysql:*) driver=org.mariadb.jdbc.Driver; default_jar=/usr/share/java/mariadb-java-client.jar;;
    *) echo "unsupported --jdbc-url $jdbc_url" >&2; exit 2;;
  esac
  if [ -z "$jdbc_jar" ] && [ "$hive" = 2.3 ]; then jdbc_jar=$default_jar; fi
  if [ -n "$jdbc_jar" ]; then
    [ -f "$jdbc_jar" ] || { echo "JDBC driver jar $jdbc_jar not found (apt-get install libpostgresql-jdbc-java or libmariadb-java)" >&2; exit 1; }
    driver_cp="$jdbc_jar:"
  fi
  conn="<property><name>javax.jdo.option.ConnectionURL</name><value>$(xml "$jdbc_url")</value></property>
  <property><name>javax.jdo.option.ConnectionDriverName</name><value>$driver</value></property>
  <property><name>javax.jdo.option.ConnectionUserName</name><value>$(xml "$jdbc_user")</value></property>
  <property><name>javax.jdo.option.ConnectionPassword</name><value>$pw_value</value></property>"
else
  conn="<property><name>javax.jdo.option.ConnectionURL</name><value>jdbc:derby:;databaseName=$dir/metastore_db;create=true</value></property>
  <property><name>javax.jdo.option.ConnectionDriverName</name><value>org.apache.derby.jdbc.EmbeddedDriver</value></property>"
fi

jvm_opts=(-Xmx"$heap" -Dderby.system.home="$dir" -Djava.net.preferIPv4Stack=true)
retry=""
[ -z "${HMS_REFERENCE_RETRY_INTERVAL:-}" ] || \
  retry="<property><name>hive.hmshandler.retry.interval</name><value>$HMS_REFERENCE_RETRY_INTERVAL</value></property>"
# shellcheck disable=SC2206
[ -z "${HMS_REFERENCE_JAVA_OPTS:-}" ] || jvm_opts+=(${HMS_REFERENCE_JAVA_OPTS})
if [ "$hive" = 2.3 ]; then
  cat > "$dir/conf/hive-site.xml" <<XML
<configuration>
  $conn
  <property><name>hive.metastore.warehouse.dir</name><value>$dir/warehouse</value></property>
  <property><name>datanucleus.schema.autoCreateAll</name><value>true</value></property>
  <property><name>hive.metastore.schema.verification</name><value>false</value></property>
  <property><name>hive.async.log.enabled</name><value>false</value></property>
  <property><name>datanucleus.connectionPoolingType</name><value>HikariCP</value></property>
  $retry
</configuration>
XML
else
  # Hive 4 as shipped, except: loopback only, no compactor, and no
  # metadata transformer (Hive 4's default one rewrites every managed non-ACID table a client without
  # "capabilities" creates into an external one with external.table.purge=TRUE: a deployment policy
  # that docs/conformance.md lists as a difference of its own, not compared call by call).
  cat > "$dir/conf/metastore-site.xml" <<XML
<configuration>
  $conn
  <property><name>metastore.warehouse.dir</name><value>$dir/warehouse</value></property>
  <property><name>metastore.thrift.bind.host</name><value>127.0.0.1</value></property>
  <property><name>datanucleus.schema.autoCreateAll</name><value>false</value></property>
  <property><name>metastore.schema.verification</name><value>true</value></property>
  <property><name>datanucleus.connectionPoolingType</name><value>HikariCP</value></property>
  <property><name>metastore.housekeeping.threads.on</name><value>false</value></property>
  <property><name>metastore.compactor.initiator.on</name><value>false</value></property>
  <property><name>metastore.event.db.notification.api.auth</name><value>false</value></property>
  <property><name>metastore.metastore.event.db.notification.api.auth</name><value>false</value></property>
  <property><name>metastore.metadata.transformer.class</name><value> </value></property>
  ${retry//hive.hmshandler/metastore.hmshandler}
</configuration>
XML
  cat > "$dir/conf/metastore-log4j2.properties" <<PROPS
status = WARN
name = ReferenceMetastore
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %5p [%t] %c{2}: %m%n
rootLogger.level = INFO
rootLogger.appenderRefs = console
rootLogger.appenderRef.console.ref = console
PROPS
  # Java 17: the reflective access Hive 4 and its libraries need
  for m in java.lang java.lang.reflect java.lang.invoke java.io java.net java.nio java.util java.util.concurrent \
           java.util.concurrent.atomic java.util.regex java.text sun.nio.ch sun.nio.cs sun.security.action \
           sun.util.calendar; do
    jvm_opts+=(--add-opens "java.base/$m=ALL-UNNAMED")
  done
  jvm_opts+=(--add-opens java.sql/java.sql=ALL-UNNAMED -Dlog4j2.formatMsgNoLookups=true
             -Dlog4j.configurationFile="$dir/conf/metastore-log4j2.properties" -Dhive.log.dir="$dir")
fi

cd "$dir"
if [ "$hive" = 4 ]; then
  # the schema, by Hive's own schematool and scripts (created, or upgraded when an older one is there)
  case "$jdbc_url" in
    "") dbtype=derby;; jdbc:postgresql:*) dbtype=postgres;; *) dbtype=mysql;;
  esac
  [ -d "$jars/scripts/metastore/upgrade/$dbtype" ] \
    || { echo "no Hive 4 schema scripts under $jars/scripts: run python -m tools.java_artifacts fetch hive4-metastore" >&2; exit 1; }
  if ! METASTORE_HOME="$jars" "$java" "${jvm_opts[@]}" -cp "$dir/conf:$driver_cp$classpath" \
       org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool -initOrUpgradeSchema -dbType "$dbtype" \
       > "$dir/schematool.log" 2>&1; then
    echo "Hive 4 schematool failed; see $dir/schematool.log" >&2; tail -20 "$dir/schematool.log" >&2; exit 1
  fi
fi
nohup "$java" "${jvm_opts[@]}" -cp "$dir/conf:$driver_cp$classpath" \
  org.apache.hadoop.hive.metastore.HiveMetaStore -p "$port" > "$dir/hms.log" 2>&1 &
pid=$!
echo "$pid" > "$dir/hms.pid"
for _ in $(seq 1 180); do
  if ! kill -0 "$pid" 2>/dev/null; then echo "reference HMS (Hive $hive) exited; see $dir/hms.log" >&2; exit 1; fi
  if "$py" -c "import socket,sys; s=socket.socket(); s.settimeout(0.5); sys.exit(s.connect_ex(('127.0.0.1', $port)))" 2>/dev/null; then
    echo "pid=$pid port=$port dir=$dir"; exit 0
  fi
  sleep 1
done
echo "reference HMS (Hive $hive) did not open port $port in 180 s; see $dir/hms.log" >&2
kill "$pid" 2>/dev/null || true
exit 1
