__all__ = ['ttypes', 'constants', 'ThriftHiveMetastore']
