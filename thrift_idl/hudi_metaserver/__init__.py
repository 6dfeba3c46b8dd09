__all__ = ['ttypes', 'constants', 'ThriftHoodieMetaserver']
