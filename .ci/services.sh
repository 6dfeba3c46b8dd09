#!/usr/bin/env bash
# Installs (from Debian's packages, when absent) and starts the services the test suite uses:
# PostgreSQL and MariaDB on loopback, each with a `test` database, plus the Thrift compiler, the
# JDBC drivers the reference Hive Metastores load, headless Chromium with its WebDriver (the web
# console's browser tests), MIT Kerberos' KDC and tools (the Kerberos tests start their own KDC),
# and Galera, Patroni with etcd, and haproxy (the cluster tests start their own). Idempotent: a
# second run only checks.
# Prints the two URLs the tests read; `eval "$(bash .ci/services.sh --exports)"` sets them.
#
#   HMS_TEST_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:5432/test  (trust on 127.0.0.1)
#   HMS_TEST_MYSQL_URL=mysql+pymysql://root@127.0.0.1:3306/test             (root, empty password)
#
# Meant for a disposable development or CI machine (it relaxes authentication on loopback and turns
# PostgreSQL's fsync off); run it as root.
set -euo pipefail
exports_only=false
[ "${1:-}" = "--exports" ] && exports_only=true
# Everything but the final exports goes to stderr, so `eval "$(... --exports)"` only ever sees the
# export lines (pg_ctlcluster, for one, prints "Removed stale pid file." on stdout).
exec 3>&1 1>&2
log() { echo "$*"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
as_postgres() { if command -v runuser >/dev/null; then runuser -u postgres -- "$@"; else su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; fi; }

need=()
command -v pg_ctlcluster >/dev/null && ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v thrift >/dev/null || need+=(thrift-compiler)
[ -f /usr/share/java/postgresql.jar ] || need+=(libpostgresql-jdbc-java)
[ -f /usr/share/java/mariadb-java-client.jar ] || need+=(libmariadb-java)
command -v chromium >/dev/null || need+=(chromium)              # the web console's browser tests
command -v chromedriver >/dev/null || need+=(chromium-driver)
command -v krb5kdc >/dev/null || [ -x /usr/sbin/krb5kdc ] || need+=(krb5-kdc)  # Kerberos tests: a KDC
command -v kadmin.local >/dev/null || [ -x /usr/sbin/kadmin.local ] || need+=(krb5-admin-server)
command -v kinit >/dev/null || need+=(krb5-user)
command -v mvn >/dev/null || need+=(maven)                                  # fetches the Java peers (tools/java_artifacts.py)
command -v krb5-config >/dev/null || need+=(libkrb5-dev)                    # builds PyPI's kerberos (a Python test client)
# the replicated databases of tests/test_galera.py and tests/test_patroni.py: the tests start their
# own clusters on loopback ports (nothing is started here)
[ -f /usr/lib/galera/libgalera_smm.so ] || need+=(galera-4)                # MariaDB Galera Cluster
command -v rsync >/dev/null || need+=(rsync)                               # Galera's state transfer
command -v patroni >/dev/null || need+=(patroni)                           # PostgreSQL failover
command -v etcd >/dev/null || need+=(etcd-server)                          # Patroni's consensus store
command -v haproxy >/dev/null || need+=(haproxy)                           # a load balancer in front
if [ ${#need[@]} -gt 0 ]; then
  log "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # no service may start from the package scripts (no init system here); we start them below
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  (apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}") >/dev/null
  rm -f /usr/sbin/policy-rc.d
  trap - EXIT
fi

# ---------------------------------------------------------------- PostgreSQL
pg_version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | grep -qx "$pg_version main"; then
  log "creating PostgreSQL $pg_version cluster"
  pg_createcluster "$pg_version" main >/dev/null
fi
conf=/etc/postgresql/$pg_version/main
if [ ! -f "$conf/conf.d/hudi-metastore-tests.conf" ]; then
  cat > "$conf/conf.d/hudi-metastore-tests.conf" <<'EOF'
# hudi-metastore test setup (.ci/services.sh): loopback only, throwaway data
listen_addresses = '127.0.0.1'
port = 5432
max_connections = 400
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 256MB
EOF
  # trust on loopback for the test user, ahead of the default rules
  sed -i '/^# hudi-metastore tests$/,+2d' "$conf/pg_hba.conf"
  sed -i '1i # hudi-metastore tests\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$conf/pg_hba.conf"
  pg_ctlcluster "$pg_version" main stop >/dev/null 2>&1 || true
fi
if ! port_open 5432; then
  log "starting PostgreSQL $pg_version"
  pg_ctlcluster "$pg_version" main start 3>&-
fi
for _ in $(seq 1 60); do port_open 5432 && break; sleep 0.5; done
port_open 5432 || { echo "PostgreSQL did not open 127.0.0.1:5432" >&2; exit 1; }
if ! psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname='test'" | grep -q 1; then
  psql -h 127.0.0.1 -U postgres -qc "create database test" >/dev/null
fi

# ---------------------------------------------------------------- MariaDB
if ! port_open 3306; then
  log "starting MariaDB"
  mkdir -p /run/mysqld /var/tmp/hudi-metastore-mariadb && chown mysql:mysql /run/mysqld /var/tmp/hudi-metastore-mariadb
  [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  cat > /etc/mysql/mariadb.conf.d/90-hudi-metastore-tests.cnf <<'EOF'
# hudi-metastore test setup (.ci/services.sh): loopback only, throwaway data
[mysqld]
bind-address = 127.0.0.1
port = 3306
max_connections = 400
innodb_flush_log_at_trx_commit = 2
skip-name-resolve
# its temporary tables' files apart from /tmp, which tests and other servers share (a query failed
# with "Error on delete of '/tmp/#sql-temptable-...'" when one vanished there)
tmpdir = /var/tmp/hudi-metastore-mariadb
EOF
  nohup mariadbd-safe >/dev/null 2>&1 3>&- &
  for _ in $(seq 1 120); do port_open 3306 && break; sleep 0.5; done
fi
port_open 3306 || { echo "MariaDB did not open 127.0.0.1:3306" >&2; exit 1; }
# root over TCP from 127.0.0.1 with an empty password (the socket keeps unix_socket auth)
mariadb -uroot <<'SQL' 2>/dev/null || mariadb -uroot -h127.0.0.1 -e "select 1" >/dev/null
CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
CREATE DATABASE IF NOT EXISTS test;
FLUSH PRIVILEGES;
SQL
mariadb -uroot -h127.0.0.1 -e "CREATE DATABASE IF NOT EXISTS test"

pg_url=postgresql+psycopg://postgres@127.0.0.1:5432/test
my_url=mysql+pymysql://root@127.0.0.1:3306/test
if $exports_only; then
  echo "export HMS_TEST_POSTGRES_URL=$pg_url" >&3
  echo "export HMS_TEST_MYSQL_URL=$my_url" >&3
else
  echo "PostgreSQL: HMS_TEST_POSTGRES_URL=$pg_url" >&3
  echo "MariaDB:    HMS_TEST_MYSQL_URL=$my_url" >&3
fi
