"""hudi timeline and snapshot

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 06:09:25.570434
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('files',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('partition_path', sa.String(length=767), nullable=False),
    sa.Column('name', sa.String(length=512), nullable=False),
    sa.Column('file_id', sa.String(length=128), nullable=False),
    sa.Column('base_instant', sa.String(length=17), nullable=False),
    sa.Column('is_log', sa.Boolean(), nullable=False),
    sa.Column('log_version', sa.Integer(), nullable=True),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('version', sa.BigInteger(), nullable=False),
    sa.Column('created_ts', sa.String(length=17), nullable=False),
    sa.Column('deleted_ts', sa.String(length=17), nullable=True),
    sa.Column('is_deleted', sa.Boolean(), nullable=False),
    sa.Column('create_time', sa.BigInteger(), nullable=False),
    sa.Column('update_time', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_files_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_files'))
    )
    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.create_index('ix_files_created', ['tbl_id', 'created_ts'], unique=False)
        batch_op.create_index('ix_files_live', ['tbl_id', 'partition_path', 'is_deleted'], unique=False,
            mysql_length={'partition_path': 255})
        batch_op.create_index('uq_files_name', ['tbl_id', 'partition_path', 'name'], unique=True,
            mysql_length={'partition_path': 200, 'name': 255})

    op.create_table('hudi_table',
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('table_type', sa.String(length=16), nullable=False),
    sa.Column('table_version', sa.Integer(), nullable=False),
    sa.Column('base_path', sa.String(length=4000), nullable=False),
    sa.Column('properties',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(),
            'mysql'), nullable=False),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_hudi_table_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('tbl_id', name=op.f('pk_hudi_table'))
    )
    op.create_table('instant',
    sa.Column('instant_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('ts', sa.String(length=17), nullable=False),
    sa.Column('action', sa.String(length=32), nullable=False),
    sa.Column('state', sa.Integer(), nullable=False),
    sa.Column('requested_ms', sa.BigInteger(), nullable=False),
    sa.Column('requested_ts', sa.String(length=17), nullable=False),
    sa.Column('completion_ts', sa.String(length=17), nullable=True),
    sa.Column('duration', sa.Integer(), nullable=False),
    sa.Column('start_ts', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_instant_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('instant_id', name=op.f('pk_instant')),
    sa.UniqueConstraint('tbl_id', 'ts', 'action', name=op.f('uq_instant_tbl_id_ts_action'))
    )
    with op.batch_alter_table('instant', schema=None) as batch_op:
        batch_op.create_index('ix_instant_state', ['tbl_id', 'state', 'ts'], unique=False)

    op.create_table('instant_markers',
    sa.Column('marker_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('ts', sa.String(length=17), nullable=False),
    sa.Column('path', sa.String(length=1024), nullable=False),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_instant_markers_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('marker_id', name=op.f('pk_instant_markers'))
    )
    with op.batch_alter_table('instant_markers', schema=None) as batch_op:
        batch_op.create_index('ix_instant_markers', ['tbl_id', 'ts'], unique=False)

    op.create_table('instant_meta',
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('ts', sa.String(length=17), nullable=False),
    sa.Column('action', sa.String(length=32), nullable=False),
    sa.Column('state', sa.Integer(), nullable=False),
    sa.Column('data',
        sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mariadb').with_variant(mysql.LONGBLOB(),
            'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_instant_meta_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('tbl_id', 'ts', 'action', 'state', name=op.f('pk_instant_meta'))
    )
    op.create_table('replaced_file_groups',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('partition_path', sa.String(length=767), nullable=False),
    sa.Column('file_id', sa.String(length=128), nullable=False),
    sa.Column('replace_ts', sa.String(length=17), nullable=False),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_replaced_file_groups_tbl_id_tbl'),
        ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_replaced_file_groups'))
    )
    with op.batch_alter_table('replaced_file_groups', schema=None) as batch_op:
        batch_op.create_index('uq_replaced_fg', ['tbl_id', 'partition_path', 'file_id'], unique=True,
            mysql_length={'partition_path': 255})

    op.create_table('tbl_timestamp',
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('ts', sa.String(length=17), nullable=False),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_tbl_timestamp_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('tbl_id', name=op.f('pk_tbl_timestamp'))
    )
    op.create_table('tbl_version',
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('version', sa.BigInteger(), nullable=False),
    sa.Column('instant_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('snapshot_status', sa.Integer(), nullable=False),
    sa.Column('create_time', sa.BigInteger(), nullable=False),
    sa.Column('update_time', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_tbl_version_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('tbl_id', 'version', name=op.f('pk_tbl_version'))
    )
    with op.batch_alter_table('tbl_version', schema=None) as batch_op:
        batch_op.create_index('ix_tbl_version_status', ['tbl_id', 'snapshot_status'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('tbl_version', schema=None) as batch_op:
        batch_op.drop_index('ix_tbl_version_status')

    op.drop_table('tbl_version')
    op.drop_table('tbl_timestamp')
    with op.batch_alter_table('replaced_file_groups', schema=None) as batch_op:
        batch_op.drop_index('uq_replaced_fg', mysql_length={'partition_path': 255})

    op.drop_table('replaced_file_groups')
    op.drop_table('instant_meta')
    with op.batch_alter_table('instant_markers', schema=None) as batch_op:
        batch_op.drop_index('ix_instant_markers')

    op.drop_table('instant_markers')
    with op.batch_alter_table('instant', schema=None) as batch_op:
        batch_op.drop_index('ix_instant_state')

    op.drop_table('instant')
    op.drop_table('hudi_table')
    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.drop_index('uq_files_name', mysql_length={'partition_path': 200, 'name': 255})
        batch_op.drop_index('ix_files_live', mysql_length={'partition_path': 255})
        batch_op.drop_index('ix_files_created')

    op.drop_table('files')
