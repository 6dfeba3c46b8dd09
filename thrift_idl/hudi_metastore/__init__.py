__all__ = ['ttypes', 'constants', 'HudiMetastore']
