# Writes numpy's promotion table for the dtypes numpy and arrayc share (tests/data/promotion.txt),
# which tests/unit/dtypes_test.cpp compares with arrayc::promote_types. bfloat16 is not in
# numpy; its row is checked against its documented rule in the test.
#   python3 tests/data/gen_promotion.py > tests/data/promotion.txt
import numpy as np

names = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "float32", "float64"]
print("# numpy %s np.promote_types(row, column); columns in the order of the rows" % np.__version__)
for a in names:
    print(a, " ".join(str(np.promote_types(a, b)) for b in names))
