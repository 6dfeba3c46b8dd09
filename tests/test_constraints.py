"""Table constraints (store/hms/constraints/constraint_service.py): created with their table in one transaction, added,
read, dropped; compared with the reference metastores (Hive 4: every call; Hive 2.3: primary and
foreign keys, the calls it has), then what only our server is asked here (atomic creation, name
rules, cascades, renames), on every backend."""

from __future__ import annotations

import re

import pytest

from tests import test_conformance as conformance
from tests.conformance.compare import Each
from tests.conformance.objects import cols, database, table
from thrift_idl.hive_metastore.ttypes import (
    AddCheckConstraintRequest,
    AddDefaultConstraintRequest,
    AddForeignKeyRequest,
    AddNotNullConstraintRequest,
    AddPrimaryKeyRequest,
    AddUniqueConstraintRequest,
    AllTableConstraintsRequest,
    AlreadyExistsException,
    CheckConstraintsRequest,
    CreateTableRequest,
    DefaultConstraintsRequest,
    DropConstraintRequest,
    ForeignKeysRequest,
    GetTableRequest,
    InvalidObjectException,
    MetaException,
    NoSuchObjectException,
    NotNullConstraintsRequest,
    PrimaryKeysRequest,
    SQLCheckConstraint,
    SQLDefaultConstraint,
    SQLForeignKey,
    SQLNotNullConstraint,
    SQLPrimaryKey,
    SQLUniqueConstraint,
    UniqueConstraintsRequest,
)

# the conformance suite's fixtures (`cf`: the reference of each Hive version and our server)
conformance_reference = conformance.conformance_reference
cf = conformance.cf


def pk(db, tbl, col, name=None, seq=1, rely=False):
    return SQLPrimaryKey(table_db=db, table_name=tbl, column_name=col, key_seq=seq, pk_name=name, enable_cstr=False,
                         validate_cstr=False, rely_cstr=rely)


def fk(db, parent, parent_col, child, child_col, name=None, seq=1):
    return SQLForeignKey(pktable_db=db, pktable_name=parent, pkcolumn_name=parent_col, fktable_db=db,
                         fktable_name=child, fkcolumn_name=child_col, key_seq=seq, update_rule=0, delete_rule=0,
                         fk_name=name, pk_name=None, enable_cstr=False, validate_cstr=False, rely_cstr=False)


def uk(db, tbl, col, name=None, seq=1):
    return SQLUniqueConstraint(table_db=db, table_name=tbl, column_name=col, key_seq=seq, uk_name=name,
                               enable_cstr=False, validate_cstr=False, rely_cstr=False)


def nn(db, tbl, col, name=None):
    return SQLNotNullConstraint(table_db=db, table_name=tbl, column_name=col, nn_name=name, enable_cstr=True,
                                validate_cstr=False, rely_cstr=False)


def dc(db, tbl, col, value, name=None):
    return SQLDefaultConstraint(table_db=db, table_name=tbl, column_name=col, default_value=value, dc_name=name,
                                enable_cstr=True, validate_cstr=False, rely_cstr=False)


def cc(db, tbl, col, expression, name=None):
    return SQLCheckConstraint(table_db=db, table_name=tbl, column_name=col, check_expression=expression,
                              dc_name=name, enable_cstr=True, validate_cstr=False, rely_cstr=False)


_GENERATED = re.compile(r"^(pk|fk|uk|nn|dc)_(-?\d+)_\d{13}_(\d+)$")


def masked(version: str):
    """post: generated constraint names with their time masked; against Hive 2.3 their hash too
    (it hashes differently) and the catalog (Hive 3+) of the answers."""

    def mask(value):
        if isinstance(value, str):
            m = _GENERATED.match(value)
            if m:
                return f"{m.group(1)}_{m.group(2) if version == '4' else '<hash>'}_<ms>_{m.group(3)}"
            return value
        if isinstance(value, list):
            return [mask(v) for v in value]
        if hasattr(value, "thrift_spec"):
            for spec in value.thrift_spec or ():
                if spec:
                    setattr(value, spec[2], mask(getattr(value, spec[2])))
            if version == "2.3" and hasattr(value, "catName"):
                value.catName = None
        return value

    return mask


# --------------------------------------------------------------------------- against the references


def test_keys_vs_reference(cf):
    """Primary and foreign keys: the calls Hive 2.3 has too (its constraint names are global: they
    carry the test's token)."""
    (db,) = conformance.names(cf, "pkf")
    t = cf.token
    post = masked(cf.version)
    cf.call("create_database", database(db), expect="ok")
    parent = table(db, "parent", cols("id int", "name string", "x int"), cols("p string"))
    cf.call("create_table_with_constraints", parent, [pk(db, "parent", "id", rely=True)], [], [], [], [], [],
            expect="ok")
    child = table(db, "child", cols("cid int", "pid int", "s string"))
    cf.call("create_table_with_constraints", child, [pk(db, "child", "cid", f"child_pk_{t}")],
            [fk(db, "parent", "id", "child", "pid")], [], [], [], [], expect="ok")
    cf.call("get_primary_keys", PrimaryKeysRequest(db_name=db, tbl_name="parent"), post=post)
    cf.call("get_primary_keys", PrimaryKeysRequest(db_name=db, tbl_name="child"), post=post)
    cf.call("get_primary_keys", PrimaryKeysRequest(db_name=db, tbl_name="nosuch"))
    cf.call("get_primary_keys", PrimaryKeysRequest(db_name=f"cf_nosuch_{cf.token}", tbl_name="parent"))
    both = ForeignKeysRequest(parent_db_name=db, parent_tbl_name="parent", foreign_db_name=db,
                              foreign_tbl_name="child")
    cf.call("get_foreign_keys", both, post=post)
    cf.call("get_foreign_keys", ForeignKeysRequest(foreign_db_name=db, foreign_tbl_name="child"), post=post)
    # refused: a column the table does not have (and the table is not created), a second primary key
    bad = table(db, "bad", cols("a int"))
    cf.call("create_table_with_constraints", bad, [pk(db, "bad", "zz", f"bad_pk_{t}")], [], [], [], [], [],
            expect="InvalidObjectException", msg=True)
    cf.call("get_table_req", GetTableRequest(dbName=db, tblName="bad"), expect="NoSuchObjectException")
    cf.call("create_table_with_constraints", parent, [pk(db, "parent", "id", f"other_{t}")], [], [], [], [], [],
            expect="AlreadyExistsException")
    cf.call("get_primary_keys", PrimaryKeysRequest(db_name=db, tbl_name="parent"), post=post)
    cf.call("add_primary_key", AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "parent", "name", f"pk2_{t}")]),
            expect="MetaException")
    # added later, dropped by name
    other = table(db, "other", cols("a int", "b int"))
    cf.call("create_table", other, expect="ok")
    cf.call("add_primary_key", AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "other", "a", f"other_pk_{t}"),
                                                                    pk(db, "other", "b", f"other_pk_{t}", 2)]),
            expect="ok")
    cf.call("add_foreign_key", AddForeignKeyRequest(foreignKeyCols=[
        fk(db, "other", "a", "child", "cid", f"fk_o_{t}", 1), fk(db, "other", "b", "child", "pid", f"fk_o_{t}", 2)]),
        expect="ok")
    cf.call("get_primary_keys", PrimaryKeysRequest(db_name=db, tbl_name="other"), post=post)
    cf.call("get_foreign_keys", ForeignKeysRequest(parent_db_name=db, parent_tbl_name="other", foreign_db_name=db,
                                                   foreign_tbl_name="child"), post=post)
    name = f"FK_O_{t}" if cf.version == "4" else f"fk_o_{t}"  # Hive 2.3 does not lower-case it
    cf.call("drop_constraint", DropConstraintRequest(dbname=db, tablename="child", constraintname=name), expect="ok")
    cf.call("get_foreign_keys", ForeignKeysRequest(parent_db_name=db, parent_tbl_name="other", foreign_db_name=db,
                                                   foreign_tbl_name="child"), post=post)
    conformance.cleanup(cf, db)


@pytest.mark.hive_versions("4")  # unique, not-null, default and check constraints are Hive 3+ calls
def test_constraints_vs_hive4(cf):
    (db,) = conformance.names(cf, "cst")
    post = masked(cf.version)
    cf.call("create_database", database(db), expect="ok")
    parent = table(db, "parent", cols("id int", "name string", "x int"), cols("p string"))
    cf.call("create_table_req", CreateTableRequest(table=parent, primaryKeys=[pk(db, "parent", "id")],
                                                   uniqueConstraints=[uk(db, "parent", "name", "u_name")]), expect="ok")
    child = table(db, "child", cols("cid int", "pid int", "s string", "n int"))
    cf.call("create_table_req", CreateTableRequest(
        table=child, foreignKeys=[fk(db, "parent", "id", "child", "pid")], uniqueConstraints=[uk(db, "child", "s")],
        notNullConstraints=[nn(db, "child", "cid")], defaultConstraints=[dc(db, "child", "n", "42")],
        checkConstraints=[cc(db, "child", "n", "n > 0", "n_positive")]), expect="ok")

    def read_all(tbl):
        cf.call("get_primary_keys", PrimaryKeysRequest(db_name=db, tbl_name=tbl, catName="hive"), post=post)
        for call, request in (("get_unique_constraints", UniqueConstraintsRequest),
                              ("get_not_null_constraints", NotNullConstraintsRequest),
                              ("get_default_constraints", DefaultConstraintsRequest),
                              ("get_check_constraints", CheckConstraintsRequest)):
            cf.call(call, request(catName="hive", db_name=db, tbl_name=tbl), post=post)
        cf.call("get_all_table_constraints", AllTableConstraintsRequest(dbName=db, tblName=tbl, catName="hive"),
                post=post)
        cf.call("get_foreign_keys", ForeignKeysRequest(foreign_db_name=db, foreign_tbl_name=tbl), post=post)

    for tbl in ("parent", "child", "CHILD", "nosuch"):
        read_all(tbl)
    cf.call("get_foreign_keys", ForeignKeysRequest(parent_db_name=db, parent_tbl_name="parent"), post=post)
    # refused
    for request, expect in (
            (CreateTableRequest(table=table(db, "t1", cols("x int")), foreignKeys=[fk(db, "nosuch", "id", "t1", "x")]),
             "InvalidObjectException"),
            (CreateTableRequest(table=table(db, "t2", cols("x string")),
                                foreignKeys=[fk(db, "parent", "id", "t2", "x")]),
             "MetaException"),  # the types differ: no key of the parent matches
            (CreateTableRequest(table=table(db, "t3", cols("x int")), foreignKeys=[fk(db, "parent", "x", "t3", "x")]),
             "MetaException"),  # not a key of the parent
            (CreateTableRequest(table=table(db, "t4", cols("id int")), primaryKeys=[pk(db, "t4", "id", "pk4")],
                                foreignKeys=[fk(db, "t4", "id", "t4", "id")]), "MetaException")):
        cf.call("create_table_req", request, expect=expect)
        cf.call("get_table_req", GetTableRequest(dbName=db, tblName=request.table.tableName),
                expect="NoSuchObjectException")
    with pytest.raises(MetaException, match="Constraint name already exists"):  # Hive 4: an internal error
        cf.ours_only("add_unique_constraint", AddUniqueConstraintRequest(
            uniqueConstraintCols=[uk(db, "parent", "x", "U_NAME")]))
    # added later, dropped by name
    cf.call("add_unique_constraint", AddUniqueConstraintRequest(uniqueConstraintCols=[uk(db, "parent", "p", "u_p")]),
            expect="ok")
    cf.call("add_not_null_constraint", AddNotNullConstraintRequest(notNullConstraintCols=[nn(db, "parent", "x")]),
            expect="ok")
    cf.call("add_default_constraint", AddDefaultConstraintRequest(
        defaultConstraintCols=[dc(db, "parent", "name", "'?'", "d_name")]), expect="ok")
    cf.call("add_check_constraint", AddCheckConstraintRequest(
        checkConstraintCols=[cc(db, "parent", "x", "x < 10")]), expect="ok")
    cf.call("add_primary_key", AddPrimaryKeyRequest(primaryKeyCols=[]), expect="ok")
    read_all("parent")
    for name in ("u_p", "D_NAME"):
        cf.call("drop_constraint", DropConstraintRequest(dbname=db, tablename="parent", constraintname=name),
                expect="ok")
    read_all("parent")
    # renames: a table keeps its constraints, a renamed column loses its own
    renamed = Each(lambda c: _renamed_table(c, db, "parent", "parent2"))
    cf.call("alter_table", db, "parent", renamed, expect="ok")
    read_all("parent2")
    read_all("child")
    with_column = Each(lambda c: _renamed_column(c, db, "parent2", "id", "ident"))
    cf.call("alter_table", db, "parent2", with_column, expect="ok")
    read_all("parent2")
    read_all("child")
    # dropping the referenced table drops the foreign keys that reference it
    cf.both("drop_table", db, "parent2", True)
    read_all("child")
    conformance.cleanup(cf, db)


def _renamed_table(client, db, old, new):
    t = client.get_table_req(GetTableRequest(dbName=db, tblName=old)).table
    t.tableName = new
    return t


def _renamed_column(client, db, tbl, old, new):
    t = client.get_table_req(GetTableRequest(dbName=db, tblName=tbl)).table
    for c in t.sd.cols:
        if c.name == old:
            c.name = new
    return t


# --------------------------------------------------------------------------- our server


@pytest.fixture
def client(our_server, thrift_client):
    return thrift_client(our_server)


@pytest.fixture
def db(client, request):
    name = f"cons_{request.node.name.split('[')[0][-20:]}"
    try:
        client.drop_database(name, True, True)
    except NoSuchObjectException:
        pass
    client.create_database(database(name))
    yield name
    client.drop_database(name, True, True)


def _pks(client, db, tbl):
    return [(k.column_name, k.key_seq, k.pk_name) for k in
            client.get_primary_keys(PrimaryKeysRequest(db_name=db, tbl_name=tbl)).primaryKeys]


def _fks(client, **kw):
    return [(k.pktable_db, k.pktable_name, k.pkcolumn_name, k.fktable_name, k.fkcolumn_name, k.fk_name, k.pk_name)
            for k in client.get_foreign_keys(ForeignKeysRequest(**kw)).foreignKeys]


def test_create_is_atomic(client, db, our_server_info):
    """A constraint that fails leaves no table (nor its directory) behind."""
    t = table(db, "t", cols("a int", "b int"))
    for bad in (dict(primaryKeys=[pk(db, "t", "a", "k"), pk(db, "t", "nosuch", "k", 2)]),
                dict(foreignKeys=[fk(db, "nosuch", "a", "t", "a")]),
                dict(primaryKeys=[pk(db, "t", "a", "k")], uniqueConstraints=[uk(db, "t", "b", "K")]),
                dict(notNullConstraints=[nn(db, "t", "a", "n1"), nn(db, "t", "b", "n1")]),
                dict(primaryKeys=[pk(db, "other_table", "a")])):
        with pytest.raises((InvalidObjectException, MetaException)):
            client.create_table_req(CreateTableRequest(table=t, **bad))
        assert "t" not in client.get_all_tables(db), bad
        assert not (our_server_info.warehouse / f"{db}.db" / "t").exists()
    client.create_table_req(CreateTableRequest(table=t, primaryKeys=[pk(db, "t", "a", "k")]))
    with pytest.raises(AlreadyExistsException):
        client.create_table_req(CreateTableRequest(table=t, primaryKeys=[pk(db, "t", "b", "k2")]))
    assert _pks(client, db, "t") == [("a", 1, "k")]


def test_names(client, db):
    """Names are lower-cased and unique per table holding the key (a foreign key's name belongs to
    the table it references); an unnamed key gets one generated name for all its columns."""
    client.create_table_with_constraints(table(db, "p", cols("a int", "b int", "c string")),
                                         [pk(db, "p", "A"), pk(db, "p", "b", seq=2)], [], [], [], [], [])
    (name_a, name_b) = [n for _, _, n in _pks(client, db, "p")]
    assert name_a == name_b and re.match(r"^pk_\d+_\d{13}_0$", name_a)
    client.add_unique_constraint(AddUniqueConstraintRequest(uniqueConstraintCols=[uk(db, "p", "c", "Same")]))
    client.create_table_with_constraints(table(db, "q", cols("c string")), [], [], [uk(db, "q", "c", "same")],
                                         [], [], [])  # another table: the name is free there
    with pytest.raises(MetaException, match="Constraint name already exists: .*same"):
        client.add_not_null_constraint(AddNotNullConstraintRequest(notNullConstraintCols=[nn(db, "p", "a", "SAME")]))
    client.create_table_with_constraints(table(db, "r", cols("x string")), [], [fk(db, "p", "c", "r", "x", "FK1")],
                                         [], [], [], [])
    # a foreign key may reference a unique key; its name is taken on the referenced table
    assert _fks(client, foreign_db_name=db, foreign_tbl_name="r") == [(db, "p", "c", "r", "x", "fk1", "same")]
    with pytest.raises(MetaException, match="Constraint name already exists"):
        client.add_unique_constraint(AddUniqueConstraintRequest(uniqueConstraintCols=[uk(db, "p", "a", "fk1")]))


def test_cascades_and_renames(client, db):
    """Constraints go with the table holding them and with a referencing table; renames of the
    table (also to another database) keep them."""
    client.create_database(database(f"{db}_2"))
    try:
        client.create_table_with_constraints(table(db, "p", cols("id int")), [pk(db, "p", "id", "p_pk")], [], [],
                                             [], [], [])
        for child in ("c1", "c2"):
            client.create_table_with_constraints(table(db, child, cols("pid int")), [],
                                                 [fk(db, "p", "id", child, "pid", f"{child}_fk")], [],
                                                 [nn(db, child, "pid", f"{child}_nn")], [], [])
        client.drop_table(db, "c1", True)
        assert _fks(client, parent_db_name=db, parent_tbl_name="p") == [(db, "p", "id", "c2", "pid", "c2_fk", "p_pk")]
        t = client.get_table(db, "p")
        t.dbName, t.tableName = f"{db}_2", "moved"
        client.alter_table(db, "p", t)
        assert _pks(client, f"{db}_2", "moved") == [("id", 1, "p_pk")]
        assert _fks(client, foreign_db_name=db, foreign_tbl_name="c2") == [
            (f"{db}_2", "moved", "id", "c2", "pid", "c2_fk", "p_pk")]
        client.drop_database(f"{db}_2", True, True)
        assert _fks(client, foreign_db_name=db, foreign_tbl_name="c2") == []
        nns = client.get_not_null_constraints(NotNullConstraintsRequest(catName="hive", db_name=db, tbl_name="c2"))
        assert [n.nn_name for n in nns.notNullConstraints] == ["c2_nn"]
    finally:
        try:
            client.drop_database(f"{db}_2", True, True)
        except NoSuchObjectException:
            pass


def test_errors(client, db):
    client.create_table(table(db, "t", cols("a int")))
    with pytest.raises(MetaException, match="Parent table not found: nosuch"):
        client.add_primary_key(AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "nosuch", "a")]))
    with pytest.raises(MetaException, match="Parent column not found: zz"):
        client.add_check_constraint(AddCheckConstraintRequest(checkConstraintCols=[cc(db, "t", "zz", "zz > 1")]))
    with pytest.raises(NoSuchObjectException, match="The constraint: nosuch does not exist"):
        client.drop_constraint(DropConstraintRequest(dbname=db, tablename="t", constraintname="nosuch"))
    with pytest.raises(NoSuchObjectException):
        client.get_primary_keys(PrimaryKeysRequest(db_name=db, tbl_name="t", catName="nosuch_catalog"))
    assert client.get_all_table_constraints(AllTableConstraintsRequest(
        dbName=db, tblName="nosuch", catName="hive")).allTableConstraints.primaryKeys == []
    with pytest.raises(InvalidObjectException, match="Table object is required"):
        client.create_table_req(CreateTableRequest(table=None))
