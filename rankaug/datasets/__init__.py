"""Built-in detection datasets for demos, tests and benchmarks (no downloads).

* :class:`SyntheticDetection`: procedural shapes on textured backgrounds.
* :class:`YoloFolder` and :func:`write_yolo_folder`: the ``images/`` + ``labels/``
  layout of YOLO datasets on disk, boxes or (``segments=True``) YOLO-seg polygons.
* :class:`CocoDetection`: a COCO detection JSON file and its image folder.

All are map-style ``torch.utils.data.Dataset`` objects giving dict samples
``{"image", "bboxes", "labels"}`` (albumentations' keys, numpy arrays; ``"segments"``
too for polygons, see :mod:`rankaug.polygons`) by default, or torchvision-style
``(image, target)`` pairs with ``as_tuple=True``.
"""

from rankaug.datasets.coco import CocoDetection
from rankaug.datasets.synthetic import SyntheticDetection
from rankaug.datasets.yolo import YoloFolder
from rankaug.datasets.yolo_writer import write_yolo_folder

__all__ = ["CocoDetection", "SyntheticDetection", "YoloFolder", "write_yolo_folder"]
