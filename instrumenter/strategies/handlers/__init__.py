"""User handlers (US 9,336,001, FIG. 4 block 440), one concept per file:

  user.py           UserHandler and its forms (`--handler`)
  object_file.py    an ELF relocatable object's function, relocated into the page
  shared_object.py  a shared object's function, copied whole into the page
"""
