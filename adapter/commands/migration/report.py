"""What a migration did and the verification that closes it, as the report printed on stdout."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TableCheck:
    name: str
    table_type: str = ""
    hudi: bool = False
    source_partitions: int = 0
    target_partitions: int = 0
    differences: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        kind = self.table_type + (" hudi" if self.hudi else "")
        state = "ok" if not self.differences else f"{len(self.differences)} difference(s)"
        out = [f"    {self.name:<32} {kind:<22} partitions {self.source_partitions}/{self.target_partitions}"
               f"  {state}"]
        out += [f"      DIFF {x}" for x in self.differences[:50]]
        if len(self.differences) > 50:
            out.append(f"      ... {len(self.differences) - 50} more")
        return out


@dataclass
class DatabaseCheck:
    name: str
    source_tables: list[str] = field(default_factory=list)
    target_tables: list[str] = field(default_factory=list)
    tables: list[TableCheck] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"  database {self.name}: {len(self.source_tables)} table(s) in source, "
               f"{len(self.target_tables)} in target"]
        out += [f"    DIFF {x}" for x in self.differences]
        for t in self.tables:
            out += t.lines()
        return out


@dataclass
class MigrationReport:
    source: str
    target: str
    dry_run: bool = False
    databases_created: int = 0
    databases_updated: int = 0
    tables_created: int = 0
    tables_updated: int = 0
    partitions_added: int = 0
    partitions_updated: int = 0
    table_stats_written: int = 0
    partition_stats_written: int = 0
    hudi_imports: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    verification: list[DatabaseCheck] = field(default_factory=list)

    @property
    def differences(self) -> list[str]:
        out = []
        for d in self.verification:
            out += [f"{d.name}: {x}" for x in d.differences]
            for t in d.tables:
                out += [f"{d.name}.{t.name}: {x}" for x in t.differences]
        return out

    def format(self) -> str:
        head = f"migrate {self.source} -> {self.target}"
        lines = [f"{head} (dry run)" if self.dry_run else head,
                 f"  databases created {self.databases_created}, updated {self.databases_updated}",
                 f"  tables created {self.tables_created}, updated {self.tables_updated}",
                 f"  partitions added {self.partitions_added}, updated {self.partitions_updated}",
                 f"  column statistics written: {self.table_stats_written} table(s), "
                 f"{self.partition_stats_written} partition(s)"]
        if self.dry_run:
            lines.append("  (counts are what would be written)")
        lines += [f"  hudi: {h}" for h in self.hudi_imports]
        lines += [f"  error: {e}" for e in self.errors]
        lines.append("verification (source vs target)" + (" before any write" if self.dry_run else ""))
        for d in self.verification:
            lines += d.lines()
        diffs = self.differences
        lines.append(f"differences: {len(diffs)}" if diffs else "differences: none")
        return "\n".join(lines)
