"""The multi-sample machinery that :mod:`rankaug.mosaic` and :mod:`rankaug.mix` share.

* :mod:`~rankaug._multi.part` and :mod:`~rankaug._multi.parts`: one source sample as
  numpy arrays (:class:`Part`), read and checked by :class:`PartReader`;
* :mod:`~rankaug._multi.tiles` and :mod:`~rankaug._multi.pairs`: its readers for a
  mosaic's tiles and for a mix's two samples (with :mod:`~rankaug._multi.letterbox` for
  a partner of another size);
* :mod:`~rankaug._multi.partners`: the partners' draws, part of the specification;
* :mod:`~rankaug._multi.replay`: reading a record back into its Generator.

Data flows one way: the wrappers import from here, never the reverse (their
configurations are named here for type checking only).
"""
